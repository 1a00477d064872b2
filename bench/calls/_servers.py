"""bench/run.py's server subprocesses: the floor and `mcpgym serve` (either mode) on free ports.

A `Server` starts one (`server_command`), waits for its first 200 from /health, reads its CPU time
and RSS from /proc, and stops it by PID (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
HOST = "127.0.0.1"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


SERVER_NAMES = ("floor", "floor-h11", "mcpgym", "mcpgym-pool", "mcpgym-production")
# `mcpgym-pool` serves the same game with `blocking = True` (the default for an environment):
# every sync tool call goes through the shared worker pool instead of running inline.
_TARGETS = {"mcpgym-pool": "bench.calls._pool_env:PoolGuessEnv"}


def server_command(name: str, port: int) -> list[str]:
    """How each server is started: the floor, and `mcpgym serve` in either mode."""
    if name in ("mcpgym", "mcpgym-pool", "mcpgym-production"):
        mode = ["--mode", "production"] if name == "mcpgym-production" else []
        return [
            sys.executable,
            "-m",
            "mcpgym.servers",
            "serve",
            _TARGETS.get(name, "mcpgym.examples.guess:GuessEnv"),
            "--host",
            HOST,
            "--port",
            str(port),
            *mode,
        ]
    if name in ("floor", "floor-h11"):
        legacy = ["--legacy"] if name == "floor-h11" else []
        floor_py = str(BENCH / "calls" / "_floor.py")
        floor = [sys.executable, floor_py, "--host", HOST, "--port", str(port)]
        return [*floor, *legacy]
    raise KeyError(name)


def _health_ok(port: int) -> bool:
    """One raw GET /health (no HTTP client import cost in the timing loop)."""
    try:
        with socket.create_connection((HOST, port), timeout=1.0) as s:
            s.sendall(f"GET /health HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
            head = s.recv(64)
    except OSError:
        return False
    return head.startswith(b"HTTP/1.1 200")


class ServerError(RuntimeError):
    pass


class Server:
    """A server subprocess on a free port; knows its start-up time, CPU time and RSS."""

    def __init__(self, name: str, command: list[str] | None = None) -> None:
        """`command` (default: `server_command(name, port)`) may use `{port}` placeholders."""
        self.name = name
        self.port = free_port()
        self.command = [a.replace("{port}", str(self.port)) for a in command or []] or None
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the Server)
        self.startup_s: float | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def url(self, path: str, scheme: str = "http") -> str:
        return f"{scheme}://{HOST}:{self.port}{path}"

    def start(self, timeout_s: float = 20.0) -> float:
        """Spawn and wait for the first 200 from /health; returns seconds from spawn to it."""
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            self.command or server_command(self.name, self.port),
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # ^C in the terminal reaches us, and we stop it by PID
        )
        deadline = t0 + timeout_s
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise ServerError(
                    f"{self.name} server exited with {self.proc.returncode}:\n{self.tail()}"
                )
            if _health_ok(self.port):
                self.startup_s = time.perf_counter() - t0
                return self.startup_s
            time.sleep(0.003)
        raise ServerError(f"{self.name} server not healthy after {timeout_s} s:\n{self.tail()}")

    def stop(self) -> None:
        """SIGTERM by PID, SIGKILL after 6 s (uvicorn's graceful shutdown is 5 s)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=6.0)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5.0)

    def tail(self, n: int = 2000) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-n:]

    def cpu_s(self) -> float:
        """utime + stime of the server process (all threads), in seconds."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise ServerError("no VmRSS")

    def native_libs(self) -> str:
        """Which native event loop / HTTP parser the running server really loaded."""
        maps = Path(f"/proc/{self.pid}/maps").read_text()
        libs = [lib for lib in ("uvloop", "httptools") if f"/{lib}/" in maps]
        return "+".join(libs) or "pure asyncio/h11"
