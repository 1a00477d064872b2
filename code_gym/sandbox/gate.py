"""`RunGate`: how many sandboxed runs one server process starts at once; the rest queue.

Every `Sandbox.run` and `arun` holds one slot of the process-wide gate (`RUN_GATE`) while its
program runs. A run that finds every slot taken waits in line (first come, first served; the
async waiters on their event loop, never in a worker thread) for at most `wait_s`, then fails
with `SandboxBusy`, a structured refusal its caller can retry. Its wall-time limit starts when
it gets a slot, so queueing never eats into a run's own time.

The default is two slots per core (`os.cpu_count()`) and a 120 s wait; a server changes them
with the environment (`CODE_GYM_MAX_RUNS`, `CODE_GYM_RUN_QUEUE_S`) or `RUN_GATE.configure()`.

>>> gate = RunGate(slots=1, wait_s=0.01)
>>> with gate.slot():
...     gate.busy
1
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Iterator

from .errors import SandboxBusy

__all__ = ["RUN_GATE", "RunGate"]


class _Waiter:
    """One queued run: woken by an Event (a thread) or a future (an event loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self.granted = False
        self.loop = loop
        self.event = threading.Event() if loop is None else None
        self.future: asyncio.Future[None] | None = loop.create_future() if loop else None

    def wake(self) -> None:
        self.granted = True
        if self.event is not None:
            self.event.set()
        elif self.loop is not None and self.future is not None:
            fut = self.future
            self.loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result(None))


class RunGate:
    """A counting gate with a FIFO queue shared by threads and event loops (module docstring)."""

    def __init__(self, *, slots: int, wait_s: float) -> None:
        self._lock = threading.Lock()
        self._queue: collections.deque[_Waiter] = collections.deque()
        self._busy = 0
        self.slots, self.wait_s = 1, 1.0
        self.configure(slots=slots, wait_s=wait_s)

    def configure(self, *, slots: int | None = None, wait_s: float | None = None) -> None:
        """Change the number of slots or the longest wait (runs already going keep theirs)."""
        bad_slots = isinstance(slots, bool) or not isinstance(slots, int) or slots < 1
        if slots is not None and bad_slots:
            raise ValueError(f"slots must be a positive int, got {slots!r}")
        if wait_s is not None and not (isinstance(wait_s, int | float) and wait_s >= 0):
            raise ValueError(f"wait_s must be a number >= 0, got {wait_s!r}")
        with self._lock:
            self.slots = slots if slots is not None else self.slots
            self.wait_s = float(wait_s) if wait_s is not None else self.wait_s
            self._wake_locked()

    @property
    def busy(self) -> int:
        """Runs holding a slot now."""
        return self._busy

    @property
    def queued(self) -> int:
        """Runs waiting for a slot now."""
        return len(self._queue)

    def _enter(self, loop: asyncio.AbstractEventLoop | None) -> _Waiter | None:
        """Take a slot (None) or join the queue (the waiter)."""
        with self._lock:
            if self._busy < self.slots and not self._queue:
                self._busy += 1
                return None
            waiter = _Waiter(loop)
            self._queue.append(waiter)
            return waiter

    def _give_up(self, waiter: _Waiter) -> bool:
        """The waiter stops waiting; True if a slot was handed to it meanwhile (it holds it)."""
        with self._lock:
            if waiter.granted:
                return True
            self._queue.remove(waiter)
            return False

    def _leave(self) -> None:
        with self._lock:
            self._busy -= 1
            self._wake_locked()

    def _wake_locked(self) -> None:
        while self._queue and self._busy < self.slots:
            self._busy += 1
            self._queue.popleft().wake()

    def _refusal(self) -> SandboxBusy:
        return SandboxBusy(
            f"all {self.slots} sandbox run slots of this server stayed busy for "
            f"{self.wait_s:g} s ({self.queued} runs queued); try again later"
        )

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot in this thread (waits up to `wait_s`, then SandboxBusy).

        On a thread running an event loop it does not wait: the slots may be held by that
        loop's own runs, which cannot end while the loop is blocked, so it takes one over the
        count (one at most per loop: the loop is blocked meanwhile).
        """
        if _on_event_loop():
            with self._lock:
                self._busy += 1
            try:
                yield
            finally:
                self._leave()
            return
        waiter = self._enter(None)
        if waiter is not None:
            assert waiter.event is not None
            if not waiter.event.wait(self.wait_s) and not self._give_up(waiter):
                raise self._refusal()
        try:
            yield
        finally:
            self._leave()

    @contextlib.asynccontextmanager
    async def aslot(self) -> AsyncIterator[None]:
        """Hold a slot on the running event loop (waits up to `wait_s`, then SandboxBusy)."""
        waiter = self._enter(asyncio.get_running_loop())
        if waiter is not None:
            assert waiter.future is not None
            try:
                await asyncio.wait_for(asyncio.shield(waiter.future), self.wait_s)
            except TimeoutError:
                if not self._give_up(waiter):
                    raise self._refusal() from None
            except BaseException:  # cancelled while queued: leave the line (or the slot)
                if self._give_up(waiter):
                    self._leave()
                raise
        try:
            yield
        finally:
            self._leave()


def _on_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _from_env() -> RunGate:
    cores = os.cpu_count() or 1
    try:
        slots = int(os.environ.get("CODE_GYM_MAX_RUNS", "") or 2 * cores)
        wait_s = float(os.environ.get("CODE_GYM_RUN_QUEUE_S", "") or 120.0)
        return RunGate(slots=slots, wait_s=wait_s)
    except ValueError as exc:
        raise ValueError(f"CODE_GYM_MAX_RUNS / CODE_GYM_RUN_QUEUE_S: {exc}") from None


#: The process-wide gate every `Sandbox` run goes through.
RUN_GATE = _from_env()
