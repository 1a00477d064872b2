"""Helpers of the bridge suite: run a fixture script under a worker venv's Python, serve a
bridged environment with `mcpgym serve --bridge`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from helpers.mcp import MCPGYM
from helpers.server import _healthy  # pyright: ignore[reportPrivateUsage]
from helpers.wait import wait_until

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_in(python: Path, script: str, *args: str, timeout: float = 300) -> list[dict[str, Any]]:
    """Run a fixture script under a worker venv's Python; its JSON lines."""
    proc = subprocess.run(
        [str(python), str(FIXTURES / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=FIXTURES,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serve_bridge(backend: str, target: str, python: Path, *extra: str) -> Iterator[str]:
    """`mcpgym serve TARGET --bridge BACKEND --python PY ...` until the block exits; its URL."""
    port = _free_port()
    cmd = [*MCPGYM, "serve", target, "--bridge", backend, "--python", str(python)]
    cmd += ["--bridge-path", str(FIXTURES), "--port", str(port), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        return _healthy(url)

    try:
        wait_until(up, timeout=90, interval=0.1, what="mcpgym serve --bridge")
        yield url
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=60)
