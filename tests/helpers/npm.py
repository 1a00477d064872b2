"""Running `mcpgym serve` and npm tools as subprocesses, for the conformance and client tests."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from helpers.wait import wait_until

MCPGYM = [sys.executable, "-m", "mcpgym.servers"]


@dataclass
class Served:
    """A `mcpgym serve` subprocess on 127.0.0.1."""

    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serve(target: str, log_dir: Path, *args: str) -> Iterator[Served]:
    """Run `mcpgym serve TARGET --port P ARGS` until the block ends; stop it by its PID."""
    port = free_port()
    log = log_dir / f"serve-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*MCPGYM, "serve", target, "--port", str(port), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(proc, port, log)
    try:
        wait_until(
            lambda: proc.poll() is not None or served.healthy(), timeout=60, what=f"{target} up"
        )
        assert proc.poll() is None, f"mcpgym serve exited:\n{log.read_text()}"
        yield served
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def run(
    args: list[str], env: dict[str, str], timeout: float = 300, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one npm tool to completion and return what it printed."""
    return subprocess.run(
        args, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False
    )
