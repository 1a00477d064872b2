"""The shared worker pool where sync environment code runs, and what happens to overdue calls.

A thread cannot be cancelled, so a call that outlives its timeout keeps its thread until it
returns. In a plain executor that thread is lost capacity: eight hung calls on a six-thread pool
stall every other session. Here a call that runs long while other work waits stops counting
against the pool within `SLOW_AFTER_S` (50 ms), and one that times out is *detached*: its thread
leaves the pool (and exits once the call returns). Either way the pool starts a replacement, so
other sessions keep their full capacity. A call that timed out before any thread picked it up
never runs at all.

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
    __slots__ = ("fn", "future", "loop", "slow", "started", "state")

    def __init__(self, fn: Callable[[], Any], loop: asyncio.AbstractEventLoop) -> None:
        self.fn = fn
        self.loop = loop
        self.future: asyncio.Future[Any] = loop.create_future()
        self.state = "queued"  # queued → running → done; queued → dropped; running → detached
        self.slow = False  # running past SLOW_AFTER_S while work waited: off the pool's capacity
        self.started = 0.0


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class WorkerPool:
    """A bounded pool of worker threads whose slow and timed-out calls give their capacity back.

    `size` threads do the work. When work waits in the queue and a running call has taken longer
    than `SLOW_AFTER_S`, that call stops counting against `size` (it is *slow*) and a new thread
    takes the waiting work, so a few long calls never make quick ones wait for them. A slow
    call's thread rejoins the pool when it finishes if there is room, else it exits. Threads in
    all (live, slow, detached) never exceed `size + MAX_EXTRA`; beyond that, work waits.
    """

    SLOW_AFTER_S = 0.05
    MAX_EXTRA = 256

    def __init__(self, size: int | None = None, name: str = "mcpgym-worker") -> None:
        self.size = size or min(32, (os.cpu_count() or 1) + 4)
        self._name = name
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._queue: deque[_Job] = deque()
        self._running: set[_Job] = set()
        self._live = 0  # threads counted against `size`
        self._idle = 0  # threads waiting for work and not yet woken for a job
        self._woken = 0  # threads notified for a job but not yet running
        self._slow = 0  # threads running a slow call (not counted against `size`)
        self._detached = 0  # threads still running a timed-out call
        self._seq = 0
        self._rebalancing = False

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
                # count the wake-up now: a second submit before this thread runs must not
                # believe it idle too (its job would then wait for no thread)
                self._idle -= 1
                self._woken += 1
                self._ready.notify()
            elif self._live < self.size:
                self._spawn()
            elif not self._rebalancing:  # every worker busy: look again shortly
                self._rebalancing = True
                job.loop.call_later(self.SLOW_AFTER_S, self._rebalance, job.loop)
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
                if job.slow:
                    self._slow -= 1
                else:
                    self._live -= 1
                self._detached += 1
                self._fill()  # the stuck thread's place goes to the waiting work
            return job.state

    def stats(self) -> dict[str, int]:
        """`{"size", "live", "idle", "queued", "slow", "detached"}`; `detached` threads run
        calls that timed out (each one's instance is unusable until it returns)."""
        with self._lock:
            return {
                "size": self.size,
                "live": self._live,
                "idle": self._idle,
                "queued": len(self._queue),
                "slow": self._slow,
                "detached": self._detached,
            }

    # -- the threads -----------------------------------------------------------------------------

    def _threads(self) -> int:
        return self._live + self._slow + self._detached

    def _fill(self) -> None:  # with the lock held: start threads for waiting work, within bounds
        waiting = len(self._queue) - self._idle
        while (
            waiting > 0 and self._live < self.size and self._threads() < self.size + self.MAX_EXTRA
        ):
            self._spawn()
            waiting -= 1

    def _rebalance(self, loop: asyncio.AbstractEventLoop) -> None:
        """Mark calls running past SLOW_AFTER_S as slow while work waits (on the loop thread)."""
        with self._lock:
            self._rebalancing = False
            if len(self._queue) <= self._idle:
                return
            now = time.monotonic()
            for job in self._running:
                if not job.slow and now - job.started > self.SLOW_AFTER_S:
                    job.slow = True
                    self._live -= 1
                    self._slow += 1
            self._fill()
            if len(self._queue) > self._idle:
                self._rebalancing = True
                loop.call_later(self.SLOW_AFTER_S, self._rebalance, loop)

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
                    if self._woken:
                        self._woken -= 1  # submit already took us off the idle count
                    else:
                        self._idle -= 1
                job = self._queue.popleft()
                job.state = "running"
                job.started = time.monotonic()
                self._running.add(job)
            try:
                ok, value = True, job.fn()
            except BaseException as exc:  # delivered to the caller, never lost in a thread
                ok, value = False, exc
            stay = self._finish(job)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                job.loop.call_soon_threadsafe(_deliver, job.future, ok, value)
            if not stay:
                return  # another thread took this one's place while its call ran long

    def _finish(self, job: _Job) -> bool:
        """Mark `job` done; whether its thread stays in the pool."""
        with self._lock:
            self._running.discard(job)
            if job.state == "detached":
                self._detached -= 1
                return False
            job.state = "done"
            if not job.slow:
                return True
            self._slow -= 1
            if self._live < self.size:  # room again: rejoin
                self._live += 1
                return True
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
