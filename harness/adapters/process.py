"""`HarnessProcess`: one harness child process in its own process group, and its clean-up.

The process starts a new session (`start_new_session=True`), so it leads a process group of its
own: stopping it signals the whole group, which takes every helper it spawned (MCP servers,
shells, language servers) with it. Descendants that left the group (a `setsid` of their own) are
found by walking `/proc` before the signals go out and are signalled one by one. Only processes
descended from the child are ever signalled, always by PID.

stdout is read as lines (NDJSON for every supported CLI); stderr is drained continuously into a
bounded tail, which `HarnessCrashed` reports.

Example::

    proc = await HarnessProcess.spawn(["cat"], stdin=True)
    await proc.write_line('{"hello": 1}')
    assert await proc.readline() == '{"hello": 1}'
    await proc.kill()
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcpgym.harness.adapters.base import HarnessCrashed, HarnessError

__all__ = ["HarnessProcess", "descendants"]

_LINE_LIMIT = 64 * 1024 * 1024  # stream-json lines carry whole tool results and prompts
_TAIL_BYTES = 16 * 1024


def _ppid_map() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # the process exited while we looked
            continue
        # "pid (comm) state ppid ...": comm may contain spaces and parentheses
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1:
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (children, grandchildren, …), from `/proc`."""
    children: dict[int, list[int]] = {}
    for child, parent in _ppid_map().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    stack = list(children.get(pid, []))
    while stack:
        p = stack.pop()
        found.append(p)
        stack.extend(children.get(p, []))
    return found


def _signal_pid(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class HarnessProcess:
    """A running harness process (see the module docstring)."""

    def __init__(self, proc: asyncio.subprocess.Process, argv: Sequence[str]) -> None:
        self._proc = proc
        self.argv = list(argv)
        self.pid = proc.pid
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self._stderr_task = asyncio.create_task(self._drain_stderr(), name=f"stderr-{proc.pid}")
        self._killed = False
        self._family: list[int] = []

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdin: bool = False,
    ) -> HarnessProcess:
        """Start `argv` in a new process group; stdin is a pipe when `stdin`, else /dev/null."""
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                start_new_session=True,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            raise HarnessError(f"cannot start {argv[0]!r}: {exc}", argv=list(argv)) from exc
        return cls(proc, argv)

    # -- I/O ---------------------------------------------------------------------------------------

    async def _drain_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        with contextlib.suppress(Exception):
            while chunk := await stream.read(4096):
                self._tail.append(chunk)
                self._tail_size += len(chunk)
                while self._tail_size > _TAIL_BYTES and len(self._tail) > 1:
                    self._tail_size -= len(self._tail.popleft())

    def stderr_tail(self, limit: int = 4000) -> str:
        """The last `limit` characters the process wrote to stderr."""
        return b"".join(self._tail).decode("utf-8", "replace")[-limit:]

    async def readline(self) -> str | None:
        """The next stdout line without its newline, or `None` at end of file."""
        stream = self._proc.stdout
        assert stream is not None
        try:
            line = await stream.readline()
        except (ValueError, asyncio.LimitOverrunError) as exc:
            raise self.crashed(f"unreadable output line: {exc}") from None
        if not line:
            return None
        return line.decode("utf-8", "replace").rstrip("\r\n")

    async def read_all(self) -> str:
        """Everything left on stdout (for one-shot commands)."""
        stream = self._proc.stdout
        assert stream is not None
        return (await stream.read()).decode("utf-8", "replace")

    async def write_line(self, text: str) -> None:
        """Write one line to stdin; `HarnessCrashed` when the process is gone."""
        await self.write(text + "\n")

    async def write(self, text: str) -> None:
        """Write `text` to stdin as it is; `HarnessCrashed` when the process is gone."""
        stream = self._proc.stdin
        if stream is None:
            raise HarnessError("the process was started without a stdin pipe")
        try:
            stream.write(text.encode())
            await stream.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise self.crashed(f"stdin closed: {exc}") from None

    async def close_stdin(self) -> None:
        """Close stdin (the program sees end of file)."""
        stream = self._proc.stdin
        if stream is not None and not stream.is_closing():
            stream.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await stream.wait_closed()

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def alive(self) -> bool:
        return self._proc.returncode is None

    async def wait(self) -> int:
        code = await self._proc.wait()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return code

    def crashed(self, what: str) -> HarnessCrashed:
        """A `HarnessCrashed` for this process, with its stderr tail and exit code."""
        code = self._proc.returncode
        status = f"exit code {code}" if code is not None else "still running"
        return HarnessCrashed(
            f"{Path(self.argv[0]).name}: {what} ({status})",
            stderr_tail=self.stderr_tail(),
            returncode=code,
        )

    async def kill(self, grace_s: float = 3.0) -> None:
        """Stop the process, its group and every descendant (idempotent).

        SIGTERM first; whatever is still there after `grace_s` gets SIGKILL. Cancelled midway,
        it sends SIGKILL at once (`kill_now`) before letting the cancellation through.
        """
        if self._killed:
            return
        self._killed = True
        self._family = descendants(self.pid)
        if self._proc.stdin is not None:
            with contextlib.suppress(Exception):
                self._proc.stdin.close()
        try:
            self._signal(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._proc.wait(), grace_s)
            self._family += [p for p in descendants(self.pid) if p not in self._family]
            if any(_exists(p) for p in self._family) or _group_exists(self.pid):
                self._signal(signal.SIGKILL)
            await self.wait()
        except BaseException:
            self.kill_now()
            raise
        finally:
            self._stderr_task.cancel()

    def kill_now(self) -> None:
        """SIGKILL the group and every descendant known, without waiting (for emergencies)."""
        self._family = [*self._family, *descendants(self.pid)]
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        _signal_group(self.pid, sig)
        for pid in self._family:
            _signal_pid(pid, sig)


def _exists(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
