"""Run the released openenv 0.10.0 from its own virtual environment: its drivers (our servers,
their clients) and a small OpenEnv server (their server, our clients)."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from helpers.wait import wait_until

HERE = Path(__file__).resolve().parents[1] / "interop"


def run_driver(python: Path, script: str, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    """Run a driver under openenv's Python: (exit code, its JSON lines, stderr tail)."""
    proc = subprocess.run(
        [str(python), str(HERE / script), *args], capture_output=True, text=True, timeout=300
    )
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, rows, proc.stderr[-3000:]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def openenv_server(python: Path, mode: str = "simulation") -> Iterator[str]:
    """Serve tests/interop/openenv_server.py (OpenEnv's own `create_app`) on 127.0.0.1."""
    port = _free_port()  # the server binds it itself: it is OpenEnv's uvicorn.run
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(
            [str(python), str(HERE / "openenv_server.py"), str(port), mode],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )

        def up() -> bool:
            if proc.poll() is not None:
                return True
            try:
                return httpx.get(f"{url}/health", timeout=1.0).status_code == 200
            except httpx.TransportError:
                return False

        try:
            wait_until(up, timeout=60.0, interval=0.1, what="the OpenEnv server to start")
            if proc.poll() is not None:
                log.seek(0)
                raise AssertionError(f"OpenEnv server exited: {log.read()[-2000:]}")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
