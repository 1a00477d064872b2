"""Helpers of the bridge suite: run a fixture script under a worker venv's Python, serve a
bridged environment with `mcpgym serve --bridge`."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serve_bridge(
    backend: str, target: str, python: Path, *extra: str, path: Path = FIXTURES
) -> Iterator[str]:
    """`mcpgym serve TARGET --bridge BACKEND --python PY ...` until the block exits; its URL."""
    port = free_port()
    cmd = [*MCPGYM, "serve", target, "--bridge", backend, "--python", str(python)]
    cmd += ["--bridge-path", str(path), "--port", str(port), *extra]
    with serving(cmd, port) as url:
        yield url


@contextlib.contextmanager
def serve_native(python: Path, app: str, path: Path = FIXTURES) -> Iterator[str]:
    """OpenEnv's own server: uvicorn serving APP (`MODULE:ATTR`, a `create_app` app) under the
    worker venv's Python, until the block exits; its URL."""
    port = free_port()
    cmd = [str(python), "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
    with serving(cmd, port, cwd=path) as url:
        yield url


def drive_openenv(
    python: Path, url: str, script: dict[str, Any], path: Path = FIXTURES
) -> dict[str, Any]:
    """What OpenEnv's own clients read playing SCRIPT at URL (openenv_wire_driver.py); PATH is
    where the environment's own package (its typed client) lives."""
    proc = subprocess.run(
        [str(python), str(FIXTURES.parent / "openenv_wire_driver.py"), url, json.dumps(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(path)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def serving(cmd: list[str], port: int, cwd: Path | None = None) -> Iterator[str]:
    """Run a server command (its output to a temporary file nobody must drain) until the block
    exits; stop it by its PID."""
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True, cwd=cwd)

        def up() -> bool:
            if proc.poll() is not None:
                log.seek(0)
                raise AssertionError(f"{cmd[:4]} exited: {log.read()[-3000:]}")
            return _healthy(url)

        try:
            wait_until(up, timeout=300, interval=0.2, what=" ".join(cmd[:4]))
            yield url
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
