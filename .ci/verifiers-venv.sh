#!/usr/bin/env bash
# The verifiers suite's venv (build/verifiers-venv): verifiers 0.4.0, openenv-core 0.3.0 and uv
# (vf-eval's harness program is a uv script), from PyPI. Built with uv (installed from PyPI with
# pip into build/bridge/uv-tool, shared with .ci/bridge-venvs.sh): pip takes minutes to resolve
# verifiers' dependency tree, uv seconds. A venv whose pins are unchanged is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
dir=${MCPGYM_VERIFIERS_VENV:-build/verifiers-venv}
want="verifiers==0.4.0 openenv-core==0.3.0 uv==0.13.8"
if [ "$(cat "$dir/.mcpgym-pins" 2>/dev/null)" = "$want" ] && "$dir/bin/python" -c "" 2>/dev/null; then
    exit 0
fi
uv=build/bridge/uv-tool/bin/uv
if ! "$uv" --version >/dev/null 2>&1; then
    "$python" -m pip install --quiet --disable-pip-version-check --target build/bridge/uv-tool "uv==0.13.8"
fi
rm -rf "$dir"
mkdir -p "$(dirname "$dir")"
"$uv" venv --quiet --python "$(command -v "$python")" "$dir"
# shellcheck disable=SC2086  # the pins are words
"$uv" pip install --quiet --compile-bytecode --python "$dir/bin/python" --cache-dir build/bridge/uv-cache $want
echo "$want" > "$dir/.mcpgym-pins"
