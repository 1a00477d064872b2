"""A process's family on Linux: its descendants, the processes carrying its marker, and how to
end them all. Standard library only: the bridge worker loads this file under a foreign
virtualenv's Python, where mcpgym is not installed.

A process group is not enough to stop what a child started: a grandchild that calls `setsid`
leaves the group, and once its parent dies it is re-parented away from the tree. Two things
keep it findable, and every stop here uses both:

- a *marker* in the environment (`NAME=TAG`), inherited by every descendant that does not
  scrub its environment, found again by scanning `/proc/PID/environ` (`marked`);
- a *child subreaper* (`make_subreaper`, Linux `PR_SET_CHILD_SUBREAPER`): orphans below a
  subreaper are re-parented to it rather than to init, so `descendants` still walks to them.

Signals go to single PIDs that were found this way, never to a name pattern.

Example:
    >>> import os
    >>> os.getpid() in descendants(os.getppid()) or os.getppid() in (0, 1)
    True
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "OWNER_ENV",
    "alive",
    "descendants",
    "family",
    "identity",
    "kill_family",
    "make_subreaper",
    "marked",
    "watch_owner",
]

_PR_SET_CHILD_SUBREAPER = 36
OWNER_ENV = "MCPGYM_OWNER"
"""The environment variable naming the process a child must not outlive (an `identity`)."""


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


def marked(name: str, tag: str) -> list[int]:
    """Every live process whose environment carries `name=tag`."""
    needle = f"{name}={tag}".encode()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:  # gone, or not ours to read
            continue
    return found


def family(pid: int, marker: tuple[str, str] | None = None) -> list[int]:
    """`pid`'s descendants plus the processes carrying `marker` (never the caller itself)."""
    found = set(descendants(pid))
    if marker is not None:
        found.update(marked(*marker))
    found.discard(os.getpid())
    return sorted(found)


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie has stopped running)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def kill_family(
    pid: int | None, marker: tuple[str, str] | None = None, *, deadline_s: float = 2.0
) -> list[int]:
    """SIGKILL `pid`'s group, `pid`, its descendants and the marked processes, again for any
    that appear meanwhile (a fork in flight), until none is left or `deadline_s` passed.
    Returns the PIDs that were signalled. `pid` may be `None` (only the marker is used) or the
    caller's own (its family dies, the caller does not)."""
    signalled: set[int] = set()
    end = time.monotonic() + deadline_s
    me = os.getpid()
    while True:
        found = family(pid if pid is not None else -1, marker)
        if pid is not None and pid != me and alive(pid):  # the caller itself: never
            found.append(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # a no-op unless pid leads a group
        targets = [p for p in found if p != me and alive(p)]
        for p in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)
        signalled.update(targets)
        if not targets or time.monotonic() >= end:
            return sorted(signalled)
        time.sleep(0.01)


def make_subreaper() -> bool:
    """Make the calling process a child subreaper (orphans below it are re-parented to it);
    False where the platform cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if fields[0] not in ("Z", "X") else None  # field 22: start time in ticks


def identity(pid: int | None = None) -> str:
    """`PID:START` naming one process for good (a reused pid has another start time)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}:{_start_time(pid)}"


def watch_owner(
    owner: str, on_gone: Callable[[], None], *, interval_s: float = 0.25
) -> threading.Thread | None:
    """Call `on_gone` (once, from a daemon thread) when the process named by `owner` (an
    `identity`) has exited, however it ended — a SIGKILLed owner included, which no signal or
    `atexit` of its own could report. `None` (and no thread) for a malformed `owner`."""
    pid_text, sep, start = owner.partition(":")
    if not sep or not pid_text.isdigit() or not start.isdigit():  # no /proc where it was made
        return None
    pid = int(pid_text)

    def watch() -> None:
        while _start_time(pid) == start:
            time.sleep(interval_s)
        on_gone()

    thread = threading.Thread(target=watch, name="owner-watch", daemon=True)
    thread.start()
    return thread
