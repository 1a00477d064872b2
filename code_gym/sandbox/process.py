"""One sandboxed process, watched until it and its pipes are done: a sync and an async driver.

Both drivers share `Job`, which owns the process, its pipes (non-blocking, read in 64 KiB
chunks into bounded buffers: never more than `output_bytes` kept per stream) and the decision
to kill: at the wall-clock deadline, or as soon as a stream overflows. Killing means SIGKILL to
bubblewrap's process group (bubblewrap and its pid-namespace init; the sandboxed program has a
session of its own), so the init dies and the kernel then kills every process left in the
namespace, daemons included. The process is reaped with `wait4`, whose rusage covers the whole
reaped tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import select
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

_CHUNK = 65_536
#: After the process is gone (or killed), how long the pipes may take to reach EOF.
_GRACE_S = 2.0
#: A held (spare) job's deadline: far away, until `hand_off` sets the real one.
_HELD_S = 10 * 86_400.0


@dataclass
class Outcome:
    """What the driver saw: raw streams, status, who killed, rusage."""

    stdout: bytes
    stderr: bytes
    stdout_overflow: bool
    stderr_overflow: bool
    status: int | None
    killed: str | None
    cpu_s: float
    maxrss_kb: int
    duration_s: float


class _Stream:
    def __init__(self, fd: int, limit: int) -> None:
        self.fd, self.limit = fd, limit
        self.data = bytearray()
        self.overflow = False

    def pull(self) -> bool:
        """Read what is there; False at EOF."""
        try:
            chunk = os.read(self.fd, _CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.data += chunk[: max(room, 0)]
            self.overflow = True
        else:
            self.data += chunk
        return True


class Job:
    """A started process and its bookkeeping; drive it with `drive_sync` or `drive_async`."""

    def __init__(
        self,
        cmd: list[str],
        *,
        stdin: bytes | None,
        wall_s: float,
        output_bytes: int,
        pass_fds: tuple[int, ...] = (),
        env: dict[str, str] | None = None,
        held: bool = False,
    ) -> None:
        """`held`: a spare started ahead of its run; its clock starts at `hand_off`."""
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        err_r, err_w = os.pipe2(os.O_CLOEXEC)
        piped = stdin is not None or held
        in_r, in_w = os.pipe2(os.O_CLOEXEC) if piped else (subprocess.DEVNULL, -1)
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=in_r,
                stdout=out_w,
                stderr=err_w,
                env=env or {},
                close_fds=True,
                pass_fds=pass_fds,
                start_new_session=True,
            )
        except BaseException:
            for fd in (out_r, err_r, in_w):
                if fd >= 0:
                    os.close(fd)
            raise
        finally:
            for fd in (out_w, err_w, in_r):
                if fd >= 0:
                    os.close(fd)
        self.started = time.monotonic()
        self.wall_s = wall_s
        #: A held job not handed off yet: nobody drives it, whoever kills it reaps it.
        self.idle = held
        self.deadline = self.started + (_HELD_S if held else wall_s)
        self.pidfd = os.pidfd_open(self.proc.pid)
        self.streams = [_Stream(out_r, output_bytes), _Stream(err_r, output_bytes)]
        for s in self.streams:
            os.set_blocking(s.fd, False)
        self.stdin_fd, self.stdin_left = in_w, memoryview(stdin or b"")
        if in_w >= 0:
            os.set_blocking(in_w, False)
        self.exited = False
        #: Called with a descriptor just before the job closes it (the driver unwatches it).
        self.before_close: Callable[[int], None] = lambda fd: None
        self.killed: str | None = None
        self._pid_lock = threading.Lock()
        self.status: int | None = None
        self.rusage: resource.struct_rusage | None = None

    def hand_off(self, data: bytes) -> bool:
        """Give a held job its input and start its clock; False when it is already gone."""
        with self._pid_lock:
            if self.exited or self.killed or select.select([self.pidfd], [], [], 0)[0]:
                return False
            self.idle = False
        self.stdin_left = memoryview(data)
        self.started = time.monotonic()
        self.deadline = self.started + self.wall_s
        return True

    # -- events -------------------------------------------------------------------------------

    def open_fds(self) -> list[int]:
        """The read ends still open."""
        return [s.fd for s in self.streams if s.fd >= 0]

    def on_readable(self, fd: int) -> None:
        """A read end has data or EOF."""
        for s in self.streams:
            if s.fd == fd and not s.pull():
                s.fd = self._close(s.fd)
            if s.overflow:
                self.kill("output")

    def on_writable(self) -> None:
        """The stdin pipe has room: write some more, close when done or refused."""
        try:
            n = os.write(self.stdin_fd, self.stdin_left[:_CHUNK])
            self.stdin_left = self.stdin_left[n:]
        except BlockingIOError:
            return
        except OSError:
            self.stdin_left = memoryview(b"")
        if not self.stdin_left:
            self.stdin_fd = self._close(self.stdin_fd)

    def on_exit(self) -> None:
        """The pidfd is readable: reap (idempotent)."""
        with self._pid_lock:
            if self.exited:
                return
            _, status, self.rusage = os.wait4(self.proc.pid, 0)
            self.status = status
            self.proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not reap
            self.exited = True
            self.pidfd = self._close(self.pidfd)
        self.deadline = min(self.deadline, time.monotonic() + _GRACE_S)

    def on_timeout(self) -> None:
        """The deadline passed: kill, or, when already dead, stop waiting for the pipes."""
        if not self.exited:
            self.kill("wall_time")
            self.deadline = time.monotonic() + _GRACE_S
        else:
            self.close_pipes()

    def kill(self, reason: str) -> None:
        """SIGKILL bubblewrap (and so the whole pid namespace); the first reason is kept."""
        with self._pid_lock:  # another thread (reset, close) may kill while the driver reaps
            if self.killed is None and not self.exited:
                self.killed = reason
            if self.exited:
                return
            # The whole process group: bwrap and its pid-namespace init. Killed in its first
            # milliseconds, bwrap dies before the init has armed `--die-with-parent`, and the
            # init would run on. Safe from pid reuse: the group leader is not reaped yet.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def wait_gone(self, timeout_s: float) -> None:
        """Wait (from any thread, without reaping) until bubblewrap, and so its whole pid
        namespace, is gone."""
        with self._pid_lock:
            if self.pidfd < 0:
                return
            watch = os.dup(self.pidfd)
        try:
            select.select([watch], [], [], timeout_s)
        finally:
            os.close(watch)

    @property
    def done(self) -> bool:
        """Exited and both pipes at EOF."""
        return self.exited and not self.open_fds()

    def timeout(self) -> float:
        """Seconds until the next deadline."""
        return max(0.0, self.deadline - time.monotonic())

    def close_pipes(self) -> None:
        """Close every pipe end we hold (idempotent)."""
        for s in self.streams:
            s.fd = self._close(s.fd)
        self.stdin_fd = self._close(self.stdin_fd)

    def _close(self, fd: int) -> int:
        if fd >= 0:
            self.before_close(fd)
            os.close(fd)
        return -1

    def outcome(self) -> Outcome:
        """The result, once `done` (or after `abandon`)."""
        ru = self.rusage
        cpu = ru.ru_utime + ru.ru_stime if ru else 0.0
        out, err = self.streams
        return Outcome(
            bytes(out.data),
            bytes(err.data),
            out.overflow,
            err.overflow,
            None if self.killed else self.status,
            self.killed,
            cpu,
            ru.ru_maxrss if ru else 0,
            time.monotonic() - self.started,
        )

    def abandon(self) -> None:
        """Kill and reap synchronously (the driver was cancelled or failed)."""
        self.kill("wall_time")
        self.on_exit()
        self.close_pipes()


def drive_sync(job: Job) -> Outcome:
    """Run `job` to completion in this thread."""
    with selectors.DefaultSelector() as sel:
        job.before_close = lambda fd: sel.unregister(fd) if fd in sel.get_map() else None
        try:
            for fd in job.open_fds():
                sel.register(fd, selectors.EVENT_READ, "r")
            sel.register(job.pidfd, selectors.EVENT_READ, "x")
            if job.stdin_fd >= 0:
                sel.register(job.stdin_fd, selectors.EVENT_WRITE, "w")
            while not job.done:
                events = sel.select(job.timeout())
                if not events and job.timeout() == 0:
                    job.on_timeout()
                for key, _ in events:
                    if key.data == "x":
                        job.on_exit()
                    elif key.data == "w":
                        job.on_writable()
                    else:
                        job.on_readable(int(key.fd))
            return job.outcome()
        except BaseException:
            job.abandon()
            raise


async def drive_async(job: Job) -> Outcome:
    """Run `job` to completion on the running event loop, never blocking it."""
    loop = asyncio.get_running_loop()
    wake = asyncio.Event()
    writers: set[int] = set()
    readers: set[int] = set()

    def unwatch(fd: int) -> None:
        if fd in writers:
            writers.discard(fd)
            loop.remove_writer(fd)
        if fd in readers:
            readers.discard(fd)
            loop.remove_reader(fd)

    def on(fd: int, kind: str) -> None:
        if kind == "x":
            job.on_exit()
        elif kind == "w":
            job.on_writable()
        else:
            job.on_readable(fd)
        wake.set()

    job.before_close = unwatch
    try:
        for fd in [*job.open_fds(), job.pidfd]:
            readers.add(fd)
            loop.add_reader(fd, on, fd, "x" if fd == job.pidfd else "r")
        if job.stdin_fd >= 0:
            writers.add(job.stdin_fd)
            loop.add_writer(job.stdin_fd, on, job.stdin_fd, "w")
        while not job.done:
            wake.clear()
            try:
                await asyncio.wait_for(wake.wait(), job.timeout())
            except TimeoutError:
                job.on_timeout()
        return job.outcome()
    except BaseException:
        job.abandon()
        raise
