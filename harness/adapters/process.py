"""`HarnessProcess`: one harness child process in its own process group, and its clean-up.

The process starts a new session (`start_new_session=True`), so it leads a process group of its
own: stopping it signals the whole group, which takes every helper it spawned (MCP servers,
shells, language servers) with it. Every descendant also inherits a marker in its environment
(`MCPGYM_HARNESS_ID`), so one that left the group (a `setsid` of its own) and was orphaned when
its parent died is still found, by the marker in `/proc/PID/environ`, as well as by walking
`/proc` parent links. Only processes carrying this harness's marker or descended from it are
ever signalled, always by PID.

The harness's *own* exit is watched apart from its pipes: children that keep stdout open must
not hide a crash. Once the process is gone, `readline` returns what is already buffered and then
end of file, `wait` returns the exit code without waiting for the pipes, and `kill` closes them
(no descriptor outlives the process).

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
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcpgym.harness.adapters.base import HarnessCrashed, HarnessError
from mcpgym.runtime import proctree
from mcpgym.runtime.proctree import descendants

__all__ = ["HarnessProcess", "descendants", "marked"]

_LINE_LIMIT = 64 * 1024 * 1024  # stream-json lines carry whole tool results and prompts
_TAIL_BYTES = 16 * 1024
_MARKER = "MCPGYM_HARNESS_ID"
_EXIT_POLL_S = 0.05  # asyncio only reports an exit once every pipe is closed: poll returncode
_EXIT_GRACE_S = 0.2  # after the exit, how long a last line may take to arrive


def marked(tag: str) -> list[int]:
    """Every live process whose environment carries this harness's marker."""
    return proctree.marked(_MARKER, tag)


def _signal_pid(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class HarnessProcess:
    """A running harness process (see the module docstring)."""

    def __init__(
        self, proc: asyncio.subprocess.Process, argv: Sequence[str], tag: str = ""
    ) -> None:
        self._proc = proc
        self.argv = list(argv)
        self.pid = proc.pid
        self.tag = tag
        self._exit_task = asyncio.create_task(self._watch_exit(), name=f"exit-{proc.pid}")
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
        tag = uuid.uuid4().hex
        child_env = {**(os.environ if env is None else env), _MARKER: tag}
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=child_env,
                cwd=cwd,
                start_new_session=True,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            raise HarnessError(f"cannot start {argv[0]!r}: {exc}", argv=list(argv)) from exc
        return cls(proc, argv, tag)

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

    async def _watch_exit(self) -> int:
        # asyncio signals an exit only once every pipe is closed, so poll the return code
        while self._proc.returncode is None:  # noqa: ASYNC110
            await asyncio.sleep(_EXIT_POLL_S)
        return self._proc.returncode

    async def readline(self) -> str | None:
        """The next stdout line without its newline, or `None` at end of file or once the
        process itself has exited and no buffered line is left (even if children keep the
        pipe open)."""
        stream = self._proc.stdout
        assert stream is not None
        read = asyncio.ensure_future(stream.readline())
        try:
            done, _ = await asyncio.wait(
                [read, self._exit_task], return_when=asyncio.FIRST_COMPLETED
            )
            if read not in done:  # the harness is gone: take what is buffered, then stop
                done, _ = await asyncio.wait([read], timeout=_EXIT_GRACE_S)
            if read not in done:
                return None
            line = read.result()
        except (ValueError, asyncio.LimitOverrunError) as exc:
            raise self.crashed(f"unreadable output line: {exc}") from None
        finally:
            if not read.done():
                read.cancel()  # StreamReader.readline keeps unread data when cancelled
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
        """The exit code, as soon as the process itself exits (children may hold its pipes)."""
        if self._exit_task.cancelled():  # after kill(): the process was reaped already
            return await self._proc.wait()
        code = await asyncio.shield(self._exit_task)
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), _EXIT_GRACE_S * 2)
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
        self._family = self._find_family()
        if self._proc.stdin is not None:
            with contextlib.suppress(Exception):
                self._proc.stdin.close()
        try:
            self._signal(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._proc.wait(), grace_s)
            self._family += [p for p in self._find_family() if p not in self._family]
            if any(proctree.alive(p) for p in self._family) or _group_exists(self.pid):
                self._signal(signal.SIGKILL)
            await self.wait()
        except BaseException:
            self.kill_now()
            raise
        finally:
            self._stderr_task.cancel()
            if not self._exit_task.done():
                self._exit_task.cancel()
            self._close_pipes()

    def kill_now(self) -> None:
        """SIGKILL the group and every descendant known, without waiting (for emergencies)."""
        self._family = [*self._family, *self._find_family()]
        self._signal(signal.SIGKILL)
        self._close_pipes()

    def _find_family(self) -> list[int]:
        family = set(descendants(self.pid))
        if self.tag:
            family.update(marked(self.tag))
        family.discard(os.getpid())
        return sorted(family)

    def _close_pipes(self) -> None:
        # The transport keeps our ends of the pipes until every writer is gone; a descendant
        # that outlived SIGKILL's delivery must not leak them (2 fds per crashed episode).
        transport = getattr(self._proc, "_transport", None)
        if transport is not None:
            with contextlib.suppress(Exception):
                transport.close()

    def _signal(self, sig: int) -> None:
        _signal_group(self.pid, sig)
        for pid in self._family:
            _signal_pid(pid, sig)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
