"""The shared worker pool where sync environment code runs, and what happens to overdue calls.

A thread cannot be cancelled, so a call that outlives its timeout keeps its thread until it
returns. In a plain executor that thread is lost capacity: eight hung calls on a six-thread pool
stall every other session. Here a call that times out is *detached*: its thread stops counting
against the pool (and exits once the call returns), so the pool starts a replacement and other
sessions keep their full capacity. A call that timed out before any thread picked it up never
runs at all.

`size` bounds the threads doing live work; detached threads are bounded by the callers: an
instance with a detached call refuses further calls until it returns (`InstanceBusy`), so there
are at most as many as there are sessions.

Example:
    >>> import asyncio
    >>> async def main():
    ...     return await shared_pool().run(lambda: 6 * 7, timeout_s=1.0)
    >>> asyncio.run(main())
    42
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["WorkerPool", "configure_shared_pool", "shared_pool"]


class _Job:
    __slots__ = ("fn", "future", "loop", "started", "state")

    def __init__(self, fn: Callable[[], Any], loop: asyncio.AbstractEventLoop) -> None:
        self.fn = fn
        self.loop = loop
        self.future: asyncio.Future[Any] = loop.create_future()
        self.state = "queued"  # queued → running → done; queued → dropped; running → detached
        self.started = 0.0


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class WorkerPool:
    """A bounded pool of worker threads whose timed-out calls give their capacity back."""

    def __init__(self, size: int | None = None, name: str = "mcpgym-worker") -> None:
        self.size = size or min(32, (os.cpu_count() or 1) + 4)
        self._name = name
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._queue: deque[_Job] = deque()
        self._live = 0  # threads counted against `size`
        self._idle = 0
        self._detached = 0  # threads still running a timed-out call
        self._seq = 0

    # -- what callers use ------------------------------------------------------------------------

    async def run(self, fn: Callable[[], Any], timeout_s: float | None = None) -> Any:
        """Run `fn()` in a worker; `TimeoutError` after `timeout_s` (the call is then detached).

        Cancelling the awaiting task detaches the call the same way.
        """
        job = self.submit(fn)
        try:  # `wait`, not `await job.future`: a cancelled caller must not cancel the job
            done, _ = await asyncio.wait([job.future], timeout=timeout_s)
        except asyncio.CancelledError:
            self.abandon(job)
            raise
        if not done:
            self.abandon(job)
            raise TimeoutError
        return job.future.result()

    def submit(self, fn: Callable[[], Any]) -> _Job:
        """Queue `fn` (call from the event loop); its result arrives on `job.future`."""
        job = _Job(fn, asyncio.get_running_loop())
        with self._lock:
            self._queue.append(job)
            if self._idle:
                self._ready.notify()
            elif self._live < self.size:
                self._spawn()
        return job

    def abandon(self, job: _Job) -> str:
        """Give up waiting for `job`: drop it if no thread took it yet, else detach its thread.

        A dropped job's future is cancelled (call from the event loop). Returns the job's state
        afterwards (`dropped`, `detached` or `done`).
        """
        with self._lock:
            if job.state == "queued":
                job.state = "dropped"
                self._queue.remove(job)
                job.future.cancel()
            elif job.state == "running":
                job.state = "detached"
                self._live -= 1
                self._detached += 1
                if self._queue and not self._idle and self._live < self.size:
                    self._spawn()  # the stuck thread's place goes to the waiting work
            return job.state

    def stats(self) -> dict[str, int]:
        """`{"size", "live", "idle", "queued", "detached"}` (`detached`: overdue calls running)."""
        with self._lock:
            return {
                "size": self.size,
                "live": self._live,
                "idle": self._idle,
                "queued": len(self._queue),
                "detached": self._detached,
            }

    # -- the threads -----------------------------------------------------------------------------

    def _spawn(self) -> None:  # with the lock held
        self._live += 1
        self._seq += 1
        thread = threading.Thread(target=self._work, name=f"{self._name}-{self._seq}", daemon=True)
        thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue:
                    self._idle += 1
                    self._ready.wait()
                    self._idle -= 1
                job = self._queue.popleft()
                job.state = "running"
                job.started = time.monotonic()
            try:
                ok, value = True, job.fn()
            except BaseException as exc:  # delivered to the caller, never lost in a thread
                ok, value = False, exc
            detached = self._finish(job)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                job.loop.call_soon_threadsafe(_deliver, job.future, ok, value)
            if detached:
                return  # a replacement took this thread's place when the call timed out

    def _finish(self, job: _Job) -> bool:
        """Mark `job` done; True when it had been detached (its thread must then exit)."""
        with self._lock:
            if job.state == "detached":
                self._detached -= 1
                return True
            job.state = "done"
            return False


_shared: WorkerPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> WorkerPool:
    """The process-wide pool every environment's sync code runs in."""
    global _shared
    if _shared is None:
        with _shared_lock:
            if _shared is None:
                size = os.environ.get("MCPGYM_WORKERS")
                _shared = WorkerPool(int(size) if size else None)
    return _shared


def configure_shared_pool(size: int) -> WorkerPool:
    """Set the size of the shared pool (`mcpgym serve --workers`); returns the pool."""
    pool = shared_pool()
    with pool._lock:  # pyright: ignore[reportPrivateUsage]
        pool.size = max(1, size)
    return pool
