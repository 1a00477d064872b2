"""A dead man's switch for a provider's containers: they go away when their owner dies.

A container outlives the process that started it: a SIGKILLed owner runs no `atexit`, no
finalizer, no `finally`, and the server inside the container cannot watch a host PID it cannot
see. So a container provider starts, before its first container, one small *reaper* process
(`python -m mcpgym.providers.gc --reap RUN`) in a session of its own, whose stdin is the read
end of a pipe whose only write end the owner holds. The reaper blocks reading it. When the owner
closes the provider, or dies in any way (the kernel closes a dead process's files), the read
returns end-of-file and the reaper removes every container, network and volume labelled with
the provider's run id (`mcpgym.providers.gc.collect(run=...)`: what `mcpgym providers gc --run`
does), then exits. After a normal close there is nothing left to remove, and it just exits.

`mcpgym providers gc` remains for what no reaper could see to (a reaper killed with its owner's
whole session, a rebooted host).

Example:
    >>> reaper = Reaper.spawn("run-doctest", engine="unix:///nonexistent.sock")
    >>> reaper.alive
    True
    >>> reaper.close()  # end of file: it collects the run (nothing here) and exits
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Self

from mcpgym.runtime.proctree import alive

__all__ = ["Reaper", "wait_for_owner"]


class Reaper:
    """One reaper process for a run, and the pipe that keeps it waiting (see the module
    docstring). Spawned with `os.posix_spawn`, not `subprocess`: the owner never has to wait
    for it, and an owner that exits first leaves no "still running" warning behind."""

    def __init__(self, pid: int, write_fd: int) -> None:
        self.pid = pid
        self._write_fd: int | None = write_fd

    @classmethod
    def spawn(cls, run_id: str, *, engine: str | None = None) -> Self:
        """Start the reaper of `run_id` (engine: a Docker API URL, default `$DOCKER_HOST`)."""
        read_fd, write_fd = os.pipe()  # not inheritable: the owner's other children never hold them
        argv = [sys.executable, "-m", "mcpgym.providers.gc", "--reap", run_id]
        if engine:
            argv += ["--engine", engine]
        try:
            pid = os.posix_spawn(
                sys.executable,
                argv,
                dict(os.environ),
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, read_fd, 0),
                    (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                ],
                setsid=True,  # a Ctrl-C meant for the owner's terminal group must not reach it
            )
        except BaseException:
            os.close(write_fd)
            raise
        finally:
            os.close(read_fd)
        return cls(pid, write_fd)

    @property
    def alive(self) -> bool:
        """Whether the reaper still waits (or is still collecting)."""
        return alive(self.pid)

    def close(self) -> None:
        """Let the reaper go: it collects what the run left (nothing, after a clean stop) and
        exits. Idempotent; never blocks (a daemon thread reads its exit status, so it does not
        stay a zombie while the owner lives on)."""
        fd, self._write_fd = self._write_fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.close(fd)
        threading.Thread(target=_reap, args=(self.pid,), name="mcpgym-reaper", daemon=True).start()

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the reaper to exit; whether it has."""
        end = time.monotonic() + timeout
        while self.alive:
            if time.monotonic() >= end:
                return False
            time.sleep(0.02)
        return True


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def wait_for_owner() -> None:
    """Block until end of file on stdin: the reaper's side of the pipe (`python -m
    mcpgym.providers.gc --reap RUN` calls it, then collects the run)."""
    with contextlib.suppress(OSError):
        while os.read(0, 4096):  # nothing is ever written: only end of file matters
            pass
