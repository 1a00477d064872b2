"""Fixtures of the verifiers suite: verifiers 0.4.0 with openenv-core 0.3.0 in their own virtual
environment (built from PyPI once, kept in build/), and `mcpgym serve` on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from helpers.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MCPGYM_VERIFIERS_VENV", ROOT / "build" / "verifiers-venv"))
PINS = {"verifiers": "0.4.0", "openenv-core": "0.3.0"}


@pytest.fixture(scope="session")
def verifiers_python() -> Path:
    """A virtual environment holding verifiers 0.4.0 and openenv-core 0.3.0 (pins checked)."""
    python = VENV / "bin" / "python"
    check = "; ".join(f"assert m.version({k!r}) == {v!r}" for k, v in PINS.items())
    probe = [str(python), "-c", f"import importlib.metadata as m; {check}"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *(f"{k}=={v}" for k, v in PINS.items())], check=True)
    subprocess.run(probe, check=True)
    return python


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def guess_server() -> Iterator[str]:
    """`mcpgym serve mcpgym.examples.guess:GuessEnv` on a free 127.0.0.1 port; its base URL."""
    yield from _serve()


@pytest.fixture(scope="module")
def guess_production() -> Iterator[str]:
    """The same, in production mode (spec `/mcp` only, no task routes); its base URL."""
    yield from _serve("--mode", "production")


GUARD_TOKEN = "operator-token-for-the-verifiers-suite"


@pytest.fixture(scope="module")
def guess_guarded() -> Iterator[tuple[str, str]]:
    """Guess the Number in simulation mode behind an operator token: (base URL, token)."""
    for url in _serve("--token", GUARD_TOKEN):
        yield url, GUARD_TOKEN


@pytest.fixture(scope="module")
def calendar_server() -> Iterator[str]:
    """`mcpgym serve calendar_gym:CalendarEnv` (simulation); its base URL."""
    yield from _serve(target="calendar_gym:CalendarEnv")


def _serve(*extra: str, target: str = "mcpgym.examples.guess:GuessEnv") -> Iterator[str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "mcpgym.servers", "serve", target, "--port", str(port), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:

        def healthy() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"mcpgym serve exited: {proc.stderr and proc.stderr.read()!r}")
            try:
                return httpx.get(f"{url}/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, timeout=30, interval=0.05, what="mcpgym serve to be healthy")
        yield url
    finally:
        if proc.stderr is not None:
            proc.stderr.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
