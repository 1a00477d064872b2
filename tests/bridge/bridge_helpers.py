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


def bridge_command(
    backend: str, target: str, python: Path, *extra: str, path: Path = FIXTURES
) -> tuple[list[str], int]:
    """`mcpgym serve TARGET --bridge BACKEND --python PY ...` on a free port: (argv, port)."""
    port = free_port()
    cmd = [*MCPGYM, "serve", target, "--bridge", backend, "--python", str(python)]
    return [*cmd, "--bridge-path", str(path), "--port", str(port), *extra], port


def native_command(python: Path, app: str) -> tuple[list[str], int]:
    """OpenEnv's own server: uvicorn serving APP (`MODULE:ATTR`, a `create_app` app) under the
    worker venv's Python, on a free port: (argv, port)."""
    port = free_port()
    return [str(python), "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)], port


@contextlib.contextmanager
def serve_bridge(
    backend: str, target: str, python: Path, *extra: str, path: Path = FIXTURES
) -> Iterator[str]:
    """`mcpgym serve TARGET --bridge BACKEND --python PY ...` until the block exits; its URL."""
    with serving(*bridge_command(backend, target, python, *extra, path=path)) as url:
        yield url


@contextlib.contextmanager
def serve_native(python: Path, app: str, path: Path = FIXTURES) -> Iterator[str]:
    """OpenEnv's own server (`native_command`) until the block exits; its URL."""
    with serving(*native_command(python, app), cwd=path) as url:
        yield url


def drive_openenv(
    python: Path, url: str, script: dict[str, Any], path: Path = FIXTURES
) -> dict[str, Any]:
    """What OpenEnv's own clients read playing SCRIPT at URL (openenv_wire_driver.py); PATH is
    where the environment's own package (its typed client) lives."""
    return drive_openenv_each(python, [url], script, path)[0]


def drive_openenv_each(
    python: Path, urls: list[str], script: dict[str, Any], path: Path = FIXTURES
) -> list[dict[str, Any]]:
    """`drive_openenv` at every URL, the drivers running at once (each imports OpenEnv, seconds
    of CPU; each plays its own server)."""
    driver = str(FIXTURES.parent / "openenv_wire_driver.py")
    env = {**os.environ, "PYTHONPATH": str(path)}
    procs = [
        subprocess.Popen(
            [str(python), driver, url, json.dumps(script)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for url in urls
    ]
    reads = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err[-3000:]
            reads.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return reads


class Server:
    """A started server process: its URL, and `wait()` for it to answer `/health`."""

    def __init__(self, cmd: list[str], port: int, proc: subprocess.Popen[str], log: Any) -> None:
        self.cmd, self.url, self.proc, self._log = cmd, f"http://127.0.0.1:{port}", proc, log

    def wait(self) -> str:
        """Block until the server is healthy (failing with its output if it exited); its URL."""

        def up() -> bool:
            if self.proc.poll() is not None:
                self._log.seek(0)
                raise AssertionError(f"{self.cmd[:4]} exited: {self._log.read()[-3000:]}")
            return _healthy(self.url)

        wait_until(up, timeout=300, interval=0.2, what=" ".join(self.cmd[:4]))
        return self.url


@contextlib.contextmanager
def started(cmd: list[str], port: int, cwd: Path | None = None) -> Iterator[Server]:
    """Start a server command (its output to a temporary file nobody must drain) without
    waiting for it, so that several start at once; stop it by its PID when the block exits."""
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True, cwd=cwd)
        try:
            yield Server(cmd, port, proc, log)
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


@contextlib.contextmanager
def serving(cmd: list[str], port: int, cwd: Path | None = None) -> Iterator[str]:
    """Run a server command until the block exits, once it is healthy; its URL."""
    with started(cmd, port, cwd) as server:
        yield server.wait()
