"""`ProcessProvider`: `mcpgym serve MODULE:ATTR` in a subprocess on 127.0.0.1.

Each server is its own process group (a new session), started with `--port 0`: the operating
system picks a free port when uvicorn binds, and the provider reads the bound address from
uvicorn's start-up line, so two servers can never race for one port. The server's output is
drained by a thread into a short ring buffer (`logs`), whether or not an event loop runs. Stop
sends SIGTERM to the whole group, waits, then SIGKILLs what is left — the group id stays reserved
until the leader is reaped, so the kill can never reach an unrelated process.

A server dies with its owner: the provider names itself in the child's environment
(`MCPGYM_OWNER`, `PID:START`, see `mcpgym.runtime.proctree.identity`), and `mcpgym serve`
watches that process and shuts down once it is gone, a SIGKILLed owner included. The provider's
labels travel in the child's environment too (`MCPGYM_LABELS`, JSON), so `mcpgym providers gc`
can find every server of a dead run with `labelled_processes()`
(one that could not shut down by itself).

Example:
    >>> p = ProcessProvider("mcpgym.examples.guess:GuessEnv")
    >>> p.command()[3:7]
    ['serve', 'mcpgym.examples.guess:GuessEnv', '--host', '127.0.0.1']
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcpgym.providers.base import LABEL_RUN, Provider, ProviderError, ServerHandle
from mcpgym.runtime.proctree import OWNER_ENV, identity

__all__ = ["LABELS_ENV", "OWNER_ENV", "LabelledProcess", "ProcessProvider", "labelled_processes"]

LABELS_ENV = "MCPGYM_LABELS"
"""The environment variable holding a provider-started process's labels (a JSON object)."""

_LISTENING = re.compile(r"Uvicorn running on (http://[\w.\[\]:-]+:\d+)")


@dataclass
class _Server:
    proc: subprocess.Popen[str]
    lines: collections.deque[str]
    reader: threading.Thread
    found: list[str]
    ready: threading.Event


class ProcessProvider(Provider):
    """Environment servers as local `mcpgym serve` subprocesses.

    Args:
        target: `MODULE:ATTR` naming the environment class or factory.
        python: the interpreter to run (e.g. another virtualenv's `bin/python`); default this one.
        uv: run through `uv run [uv_args] python -m mcpgym.servers ...` instead (the project's
            environment as uv resolves it); `python` is then ignored.
        serve_args: extra `mcpgym serve` options, e.g. `["--max-sessions", "64"]`.
        env: extra environment variables for the server.
        cwd: working directory of the server (default this process's).
        stop_timeout_s: how long SIGTERM may take before SIGKILL.
        log_lines: how many output lines `logs` keeps per server.
    """

    kind = "process"

    def __init__(
        self,
        target: str,
        *,
        python: str | os.PathLike[str] | None = None,
        uv: bool = False,
        uv_args: Sequence[str] = (),
        serve_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stop_timeout_s: float = 10.0,
        log_lines: int = 200,
        run_id: str | None = None,
        health_deadline_s: float = 60.0,
    ) -> None:
        super().__init__(run_id=run_id, health_deadline_s=health_deadline_s)
        self.target = target
        self.python = str(python) if python is not None else sys.executable
        self.uv = uv
        self.uv_args = list(uv_args)
        self.serve_args = list(serve_args)
        self.env = dict(env or {})
        self.cwd = Path(cwd) if cwd is not None else None
        self.stop_timeout_s = stop_timeout_s
        self.log_lines = log_lines
        self._servers: dict[str, _Server] = {}

    def command(self) -> list[str]:
        """The argv of one server."""
        serve = ["-m", "mcpgym.servers", "serve", self.target, "--host", "127.0.0.1"]
        # info level: uvicorn's start-up line carries the port the OS picked for --port 0
        serve += ["--port", "0", "--log-level", "info", *self.serve_args]
        if self.uv:
            uv = shutil.which("uv") or "uv"
            return [uv, "run", *self.uv_args, "python", *serve]
        return [self.python, *serve]

    def _environment(self) -> dict[str, str]:
        env = {**os.environ, **self.env, LABELS_ENV: json.dumps(self.labels, sort_keys=True)}
        env[OWNER_ENV] = identity()
        env["PYTHONUNBUFFERED"] = "1"
        return env

    async def _start(self) -> ServerHandle:
        spawning = asyncio.ensure_future(asyncio.to_thread(self._spawn))
        try:
            server = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            # the thread finishes the spawn regardless: stop that process, never leak it
            with contextlib.suppress(Exception):
                await self._terminate(await spawning)
            raise
        try:
            return await self._listening(server)
        except BaseException:
            await asyncio.shield(self._terminate(server))
            raise

    async def _listening(self, server: _Server) -> ServerHandle:
        pid = server.proc.pid
        end = time.monotonic() + self.health_deadline_s
        while not server.ready.is_set():
            if time.monotonic() >= end:
                await self._terminate(server)
                raise ProviderError(
                    f"server {self.target} (pid {pid}) printed no listening address within "
                    f"{self.health_deadline_s:.0f}s:\n" + _tail(server.lines)
                )
            await asyncio.to_thread(server.ready.wait, 0.2)
        if not server.found:
            await self._terminate(server)
            raise ProviderError(
                f"server {self.target} (pid {pid}) exited with code {server.proc.poll()} "
                "before listening:\n" + _tail(server.lines)
            )
        handle = ServerHandle(id=f"process-{pid}", base_url=server.found[0], meta={"pid": pid})
        self._servers[handle.id] = server
        return handle

    def _spawn(self) -> _Server:
        try:
            proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                env=self._environment(),
                cwd=self.cwd,
                start_new_session=True,  # its own process group: stop reaches every child
            )
        except OSError as exc:
            raise ProviderError(f"cannot run {self.command()[0]}: {exc}") from exc
        lines: collections.deque[str] = collections.deque(maxlen=self.log_lines)
        found: list[str] = []
        ready = threading.Event()

        def drain() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.append(line.rstrip("\n"))
                if not found and (m := _LISTENING.search(line)):
                    found.append(m.group(1))
                    ready.set()
            ready.set()  # EOF: the process is gone (found stays empty if it never listened)

        reader = threading.Thread(target=drain, name=f"mcpgym-server-{proc.pid}", daemon=True)
        reader.start()
        return _Server(proc, lines, reader, found, ready)

    async def _stop(self, handle: ServerHandle) -> None:
        server = self._servers.pop(handle.id, None)
        if server is not None:
            await self._terminate(server)

    async def _terminate(self, server: _Server) -> None:
        """Stop the server's group and close its pipe. Idempotent (a reaped leader is skipped)."""
        if server.proc.returncode is None:
            await asyncio.to_thread(_stop_group, server.proc, self.stop_timeout_s)
        await asyncio.to_thread(server.reader.join, 5.0)
        if server.proc.stdout is not None:
            server.proc.stdout.close()

    async def _logs(self, handle: ServerHandle) -> str:
        server = self._servers.get(handle.id)
        return "\n".join(server.lines) if server is not None else ""

    async def alive(self, handle: ServerHandle) -> bool | None:
        """Whether the server's process still runs (`None` for a handle not started here)."""
        server = self._servers.get(handle.id)
        if server is None:
            return None
        # not poll(): reaping here would free the group id before stop's final SIGKILL
        return server.proc.returncode is None and not _exited(server.proc.pid)


def _stop_group(proc: subprocess.Popen[str], timeout: float) -> None:
    """SIGTERM the group, wait for the leader without reaping it, SIGKILL the rest, reap."""
    pgid = proc.pid  # start_new_session: the leader's pid is the group id
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    end = time.monotonic() + timeout
    while time.monotonic() < end and not _exited(proc.pid):
        time.sleep(0.02)  # polling a child's exit; waitid has no timeout of its own
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)  # leftovers (uv's child, a stuck server)
    proc.wait()


def _exited(pid: int) -> bool:
    """Whether the child `pid` has exited, leaving it unreaped (so its group id stays ours)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _tail(lines: collections.deque[str], n: int = 20) -> str:
    return "\n".join(list(lines)[-n:]) or "(no output)"


@dataclass(frozen=True)
class LabelledProcess:
    """A process started by a provider, found through its `MCPGYM_LABELS` environment."""

    pid: int
    labels: dict[str, str]


def labelled_processes(run_id: str | None = None) -> Iterator[LabelledProcess]:
    """Processes (of this user, on this machine) carrying provider labels; `run_id` filters.

    For `gc`: a server leads its own process group, so `os.killpg(os.getpgid(pid), SIGTERM)`
    stops it whole (a `uv run` server's child python carries the labels too).
    """
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "environ").read_bytes()
        except OSError:  # gone, or another user's
            continue
        for item in raw.split(b"\0"):
            if not item.startswith(LABELS_ENV.encode() + b"="):
                continue
            try:
                labels = json.loads(item.split(b"=", 1)[1])
            except ValueError:
                break
            if isinstance(labels, dict) and (run_id is None or labels.get(LABEL_RUN) == run_id):
                yield LabelledProcess(int(entry.name), {str(k): str(v) for k, v in labels.items()})
            break
