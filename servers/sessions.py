"""Sessions: one environment instance per WebSocket (or MCP) session, capacity, idle reaping.

All sessions live on the event loop; no thread is dedicated to a session. Sync environment calls
borrow a worker from the shared pool only for the duration of a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from mcpgym.env import Environment
from mcpgym.errors import CapacityReached, ExecutionError
from mcpgym.runtime import crashes, heap
from mcpgym.runtime.workers import shared_pool
from mcpgym.servers.factory import EnvFactory

__all__ = ["Session", "SessionManager"]

log = logging.getLogger("mcpgym.servers")
_ids = itertools.count(1)


@dataclass(eq=False, slots=True)
class Session:
    """One client's environment and bookkeeping.

    `on_reap` is set by the transport: how to close the client side when the session is reaped.
    """

    id: str
    env: Environment[Any, Any, Any]
    transport: str
    started: bool = False
    last_active: float = field(default_factory=time.monotonic)
    busy: int = 0
    closed: bool = False
    on_reap: Callable[[], Awaitable[None]] | None = None
    end_reason: str | None = None  # why the server ended it (e.g. its memory budget)
    small_reply: bool = False  # the reply being sent is certainly small (set by the dispatcher)
    on_close: Callable[[], None] | None = None  # told once it is closed, however it ended

    def touch(self) -> None:
        self.last_active = time.monotonic()


class SessionManager:
    """Creates, tracks, reaps and closes sessions, within a capacity."""

    def __init__(
        self,
        factory: EnvFactory,
        *,
        max_sessions: int,
        idle_timeout_s: float,
        max_mcp_sessions: int | None = None,
        reap_interval_s: float = 5.0,
        inline_factory: bool = False,
    ) -> None:
        self._factory = factory
        self._inline = inline_factory
        self.max_sessions = max_sessions
        # MCP sessions have a quota of their own: unauthenticated `initialize` calls on
        # simulation /mcp must not lock trainers out of /ws (and the other way round)
        self.max_mcp_sessions = max_mcp_sessions or max_sessions
        self._counts = {"mcp": 0, "ws": 0}
        self.idle_timeout_s = idle_timeout_s
        self.reap_interval_s = reap_interval_s
        self._sessions: dict[str, Session] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._closed_since_release = 0  # sessions closed since freed memory was last given back

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    async def end(self, session: Session, reason: str) -> None:
        """End a session for `reason` (its client is told, as when it is reaped)."""
        session.end_reason = reason
        await self._reap_one(session)

    def get(self, session_id: str) -> Session | None:
        return self._sessions.get(session_id)

    async def open(self, transport: str) -> Session:
        """Reserve a slot and build the environment; `CapacityReached` when full.

        A factory that raises gives `ExecutionError` and frees the slot.
        """
        group = "mcp" if transport == "mcp" else "ws"
        limit = self.max_mcp_sessions if group == "mcp" else self.max_sessions
        if self._counts[group] >= limit:
            raise CapacityReached(
                f"server is at capacity ({limit} {group} sessions); retry later",
                max_sessions=limit,
            )
        self._counts[group] += 1
        try:
            if self._inline:  # a `blocking = False` class: cheap to build on the loop
                env = self._factory()
            else:
                env = await shared_pool().run(self._factory)
        except BaseException as exc:
            self._counts[group] -= 1
            if not isinstance(exc, Exception):
                raise
            raise ExecutionError(
                f"environment factory raised {type(exc).__name__}: {exc}",
                exception=type(exc).__name__,
                **crashes.record(None, f"the environment factory ({transport} session)", exc),
            ) from exc
        session = Session(id=f"s{next(_ids)}", env=env, transport=transport)
        crashes.tag_session(env, f"{session.id} {transport}")
        self._sessions[session.id] = session
        return session

    async def close(self, session: Session) -> None:
        """Forget the session at once and close its environment in the background.

        Idempotent; never raises. `env.aclose()` waits for a call still running in a worker
        thread (a timed-out step), so it must not hold up the caller, the reaper or other sessions.
        """
        if session.closed:
            return
        session.closed = True
        self._closed_since_release += 1
        if self._sessions.pop(session.id, None) is not None:
            self._counts["mcp" if session.transport == "mcp" else "ws"] -= 1
        if session.on_close is not None:
            on_close, session.on_close = session.on_close, None
            try:
                on_close()
            except Exception:
                log.exception("a close hook failed for session %s", session.id)
        task = asyncio.create_task(self._close_env(session), name=f"mcpgym-close-{session.id}")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    @staticmethod
    async def _close_env(session: Session) -> None:
        try:
            await session.env.aclose()
        except Exception:
            log.exception("env.close() failed for session %s", session.id)

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Wait (bounded) for environments still closing."""
        if self._closing:
            await asyncio.wait(list(self._closing), timeout=timeout_s)

    async def close_all(self) -> None:
        for session in list(self._sessions.values()):
            await self._reap_one(session)

    # -- idle reaping ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the reaper task (called from the app's lifespan)."""
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap_loop(), name="mcpgym-session-reaper")

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        await self.close_all()
        await self.drain()

    async def _reap_loop(self) -> None:
        while True:
            await asyncio.sleep(self.reap_interval_s)
            await self.reap_idle()
            await self.release_memory()

    async def release_memory(self) -> bool:
        """Once sessions were closed and their environments finished closing: collect their
        cycles and give the freed heap back to the OS (`runtime.heap`, in a worker thread).
        Whether it ran."""
        if self._closed_since_release == 0 or self._closing:
            return False
        self._closed_since_release = 0
        try:
            await shared_pool().run(heap.release, timeout_s=30.0)
        except Exception:  # never the reaper's end
            log.exception("giving freed memory back failed")
        return True

    async def reap_idle(self) -> int:
        """Close sessions idle for longer than `idle_timeout_s`; returns how many."""
        deadline = time.monotonic() - self.idle_timeout_s
        stale = [s for s in self._sessions.values() if s.busy == 0 and s.last_active < deadline]
        for session in stale:
            log.info("reaping idle session %s", session.id)
            await self._reap_one(session)
        return len(stale)

    async def _reap_one(self, session: Session) -> None:
        if session.on_reap is not None:
            with contextlib.suppress(Exception):
                await session.on_reap()
        await self.close(session)
