"""Serve an environment for real, in a child process: `python -m mcpgym.servers serve ...`.

The SDK imports no web framework, so runtime validation (and `mcpgym.from_env`) starts the
server as a subprocess bound to 127.0.0.1 on a port the OS picks; the port is read from the
server's start-up line and `/health` is polled with a deadline. `stop()` terminates the process it
started (by its own handle), then kills it if it does not exit in time. The child names this
process its owner (`MCPGYM_OWNER`), so it also shuts down when this process dies without
stopping it, a SIGKILL included (`mcpgym serve` watches its owner).

Example:
    >>> with LocalServer("mcpgym.examples.guess:GuessEnv") as srv:  # doctest: +SKIP
    ...     print(srv.url)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

from mcpgym.runtime.proctree import OWNER_ENV, identity

__all__ = ["LocalServer", "ServerStartError"]

_RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


def _last_error(logs: str) -> str:
    """`: <the last line mcpgym serve printed as its error>`, when it printed one."""
    for line in reversed(logs.splitlines()):
        if "error:" in line:
            return ": " + line.strip()
    return ""


class ServerStartError(RuntimeError):
    """The server did not come up (or not healthy) within the deadline; `logs` holds its output."""

    def __init__(self, message: str, logs: str) -> None:
        super().__init__(message)
        self.logs = logs


class LocalServer:
    """One `mcpgym serve TARGET` child process on 127.0.0.1.

    Args:
        target: MODULE:ATTR of the environment.
        mode: `simulation` or `production`.
        root: a folder put first on the child's import path (and its working directory).
        startup_s: deadline for the server to answer `/health`.
        extra_args: more `mcpgym serve` options (e.g. `["--step-timeout", "5"]`).
        env: environment variables set for the child (e.g. `{"PYTHONHASHSEED": "7"}`).
    """

    def __init__(
        self,
        target: str,
        *,
        mode: str = "simulation",
        root: str | Path | None = None,
        startup_s: float = 30.0,
        extra_args: list[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.target = target
        self.mode = mode
        self.root = str(root) if root else None
        self.startup_s = startup_s
        self.extra_args = list(extra_args or [])
        self.env = dict(env or {})
        self.url = ""
        self.startup_seconds = 0.0
        self._proc: subprocess.Popen[str] | None = None
        self._lines: list[str] = []
        self._port: int | None = None
        self._seen = threading.Event()
        self._reader: threading.Thread | None = None

    @property
    def logs(self) -> str:
        """What the server printed so far."""
        return "".join(self._lines)

    @property
    def alive(self) -> bool:
        """Whether the child process is still running."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Self:
        """Start the child and wait until `/health` answers 200 (raises `ServerStartError`)."""
        env = {**os.environ, OWNER_ENV: identity(), **self.env}
        if self.root:
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (self.root, env.get("PYTHONPATH", "")) if p
            )
        cmd = [sys.executable, "-m", "mcpgym.servers", "serve", self.target, "--port", "0"]
        cmd += ["--mode", self.mode, "--log-level", "info", *self.extra_args]
        began = time.monotonic()
        self._proc = subprocess.Popen(
            cmd,
            cwd=self.root or None,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = began + self.startup_s
        if not self._seen.wait(timeout=self.startup_s) or self._port is None:
            code = None
            if self._seen.is_set():  # its output ended: the process is ending, reap it
                try:
                    code = self._proc.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    code = None
            waited = time.monotonic() - began
            self.stop()
            if code is not None:  # it ended: saying "did not start in time" would be untrue
                raise ServerStartError(
                    f"the server exited with code {code} after {waited:.1f} s, before it "
                    f"listened{_last_error(self.logs)}",
                    self.logs,
                )
            raise ServerStartError(
                f"the server did not start within {self.startup_s:g} s", self.logs
            )
        self.url = f"http://127.0.0.1:{self._port}"
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                resp = httpx.get(self.url + "/health", timeout=2.0, trust_env=False)
                if resp.status_code == 200:
                    self.startup_seconds = time.monotonic() - began
                    return self
                last = f"HTTP {resp.status_code}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            if not self.alive:
                break
            time.sleep(0.05)
        self.stop()
        raise ServerStartError(f"/health did not answer 200 (last: {last})", self.logs)

    def _read(self) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        for line in proc.stdout:
            self._lines.append(line)
            m = _RUNNING.search(line)
            if m and self._port is None:
                self._port = int(m.group(1))
                self._seen.set()
        self._seen.set()  # the process ended: wake the waiter

    def wait_exit(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the child to exit by itself; whether it has."""
        proc = self._proc
        if proc is None:
            return True
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self) -> None:
        """Terminate the child (SIGTERM, then SIGKILL after 5 s). Idempotent."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5.0)
        if self._reader is not None:
            self._reader.join(timeout=5.0)  # EOF once the child is gone
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
