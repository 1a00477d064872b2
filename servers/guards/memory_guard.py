"""A per-session memory budget for environments served in this process (`--session-memory-mb`).

CPython cannot charge allocations to a session cheaply: `tracemalloc` slows every allocation,
and threads share one heap. So the guard measures *what a session holds* rather than what it
allocates, and only when the process has grown enough to make it worth it:

- every `interval_s` (0.5 s) it reads the process's resident size (`/proc/self/statm`, a few
  microseconds); while it stays within one budget of the size after the last check, nothing else
  happens;
- past that, it sizes every session's environment: the objects reachable from that instance and
  from no other session's (classes, modules and functions are skipped; at most a million objects
  per session), plus what the environment reports itself through an optional `memory_bytes()`
  method (memory outside Python objects, e.g. an SQLite database);
- a session over the budget is ended with a clear reason (a `/ws` client gets close code 4003,
  "memory budget exceeded: ..."), its environment closed; the others carry on. Memory is then
  handed back to the operating system (`gc.collect`, `malloc_trim`).

Not bounded by this guard (docs/security.md): memory a call holds only while it runs (its locals,
a result being built), memory shared between sessions, and allocations outside Python objects an
environment does not report. For a hard bound per session, serve the environment through the
bridge with `--bridge-memory-mb` (one worker process per session under `RLIMIT_DATA`), or one
session per server process under a container's memory limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
import types
from pathlib import Path
from typing import Any

from mcpgym.runtime import heap
from mcpgym.servers.sessions import SessionManager

__all__ = ["MemoryGuard", "held_bytes"]

log = logging.getLogger("mcpgym.servers")
_PAGE = os.sysconf("SC_PAGESIZE") if hasattr(os, "sysconf") else 4096
_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
           types.CodeType, types.FrameType)  # fmt: skip


def _rss() -> int:
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _reach(root: Any, max_objects: int) -> dict[int, Any]:
    """The objects reachable from `root` (shared kinds skipped), by id, at most `max_objects`."""
    found: dict[int, Any] = {id(root): root}
    stack: list[Any] = [root]
    while stack and len(found) < max_objects:
        for ref in gc.get_referents(stack.pop()):
            if id(ref) not in found and not isinstance(ref, _SHARED):
                found[id(ref)] = ref
                stack.append(ref)
    return found


def held_bytes(envs: list[Any], max_objects: int = 1_000_000) -> list[int]:
    """What each of `envs` holds alone: the sizes of the objects reachable from it and from no
    other (classes, modules, functions skipped; at most `max_objects` each), plus its own
    `memory_bytes()` when it has one."""
    reached = [_reach(env, max_objects) for env in envs]
    owners: dict[int, int] = {}
    for objects in reached:
        for key in objects:
            owners[key] = owners.get(key, 0) + 1
    sizes = []
    for env, objects in zip(envs, reached, strict=True):
        total = sum(sys.getsizeof(o, 64) for key, o in objects.items() if owners[key] == 1)
        report = getattr(env, "memory_bytes", None)
        if callable(report):
            with contextlib.suppress(Exception):
                reported: Any = report()
                total += int(reported)
        sizes.append(total)
    return sizes


class MemoryGuard:
    """Ends sessions holding more than `budget_bytes` (see the module docstring)."""

    def __init__(
        self, sessions: SessionManager, budget_bytes: int, *, interval_s: float = 0.5
    ) -> None:
        self.sessions = sessions
        self.budget_bytes = budget_bytes
        self.interval_s = interval_s
        self.ended = 0
        self._base = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching (from the app's lifespan)."""
        self._base = _rss()
        self._task = asyncio.create_task(self._loop(), name="mcpgym-memory-guard")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            if _rss() - self._base > self.budget_bytes:
                await self.check()

    async def check(self) -> list[str]:
        """Size every session now; end those over the budget; returns their ids."""
        over: list[str] = []
        live = list(self.sessions)
        for session, size in zip(live, held_bytes([s.env for s in live]), strict=True):
            if size > self.budget_bytes:
                mib, budget = size >> 20, self.budget_bytes >> 20
                reason = f"memory budget exceeded: the session held {mib} MiB of its {budget} MiB"
                log.warning("ending session %s: %s", session.id, reason)
                await self.sessions.end(session, reason)
                over.append(session.id)
        self.ended += len(over)
        if over:
            await self.sessions.drain()
            heap.release()
        self._base = _rss()
        return over
