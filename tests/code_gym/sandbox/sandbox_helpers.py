"""Helpers for the sandbox's attack tests (imported by the test modules)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterable

from code_gym.sandbox import Sandbox

BoxFactory = Callable[..., Sandbox]


def processes_with(token: str) -> list[int]:
    """Host pids whose command line contains `token` (a test's unique marker)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(entry))
    return found


def kill_all(pids: Iterable[int]) -> None:
    """SIGKILL what a weakened sandbox left behind (pids this test's attack started)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def describe(pids: Iterable[int]) -> list[str]:
    """Command lines and states of `pids`, for a failure message."""
    out = []
    for pid in pids:
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()[:80]
            with open(f"/proc/{pid}/status") as f:
                state = [line for line in f if line.startswith(("State", "PPid"))]
            out.append(f"{pid} {cmd!r} {state}")
    return out


def gone(token: str, timeout_s: float = 3.0) -> bool:
    """Wait until no host process carries `token`; False if some still do at the deadline."""
    deadline = time.monotonic() + timeout_s
    while processes_with(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
