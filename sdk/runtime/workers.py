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

The hand-off is direct (docs/sessions.md): the loop appends the job to a deque and, only if no
worker is awake, releases one sleeping worker's own lock (no `Condition`, no executor `Future`
chained to an asyncio one); the worker hands the outcome back with one `call_soon_threadsafe` to
the job's `done` callback (uvloop coalesces the wake-ups of calls that finish while the loop is
busy into one).

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

__all__ = [
    "DETACHED",
    "DONE",
    "DROPPED",
    "QUEUED",
    "RUNNING",
    "Expired",
    "Job",
    "WorkerPool",
    "configure_shared_pool",
    "expire",
    "shared_pool",
]

QUEUED, RUNNING, DONE, DROPPED, DETACHED = "queued", "running", "done", "dropped", "detached"
_clock = time.monotonic


class Job:
    """One call for the pool: `fn(*args, **kwargs)` in a worker, then `done(job, ok, value)` on
    `loop` (exactly once, unless the job was dropped before it ran)."""

    __slots__ = ("args", "done", "fn", "kwargs", "loop", "slow", "started", "state")

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        loop: asyncio.AbstractEventLoop,
        done: Callable[[Job, bool, Any], None],
    ) -> None:
        self.fn, self.args, self.kwargs, self.loop, self.done = fn, args, kwargs, loop, done
        self.state = QUEUED  # queued → running → done; queued → dropped; running → detached
        self.slow = False  # running past SLOW_AFTER_S while work waited: off the pool's capacity
        self.started = 0.0


class Expired(Exception):
    """Set on a call's future by its timer: the timeout passed (never raised by user code)."""


def expire(future: asyncio.Future[Any]) -> None:
    """A timer's callback: fail `future` with `Expired` unless it finished first."""
    if not future.done():
        future.set_exception(Expired())


def _ignore(_job: Job, _ok: bool, _value: Any) -> None:
    return None


def _to_future(future: asyncio.Future[Any]) -> Callable[[Job, bool, Any], None]:
    def done(_job: Job, ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    return done


class WorkerPool:
    """A bounded pool of worker threads whose slow and timed-out calls give their capacity back.

    Up to `size` threads do the work, but only as many are *awake* as the work needs: a thread
    that finishes a call takes the next one waiting without sleeping, and another thread is woken
    only when none is awake, or when work waits and no call finished for `SPILL_AFTER_S` (2 ms):
    then every awake thread is stuck inside its call (blocked on I/O, a lock, a sleep). While
    calls keep finishing, the work waits only for the CPU, which more threads would not add (the
    GIL) but would fight over. Quick calls from many sessions thus run back to back in one
    thread with one wake-up per burst, while a blocking call holds up the others ~2 ms.

    When no call finished for `SLOW_AFTER_S` while work waits, every call running longer than
    that stops counting against `size` (it is *slow*) and new threads take the waiting work, so
    a few long calls never make quick ones wait for them. A slow call's thread rejoins the pool
    when it finishes if there is room, else it exits. Threads in all (live, slow, detached)
    never exceed `size + MAX_EXTRA`; beyond that, work waits.
    """

    SPILL_AFTER_S = 0.002
    SLOW_AFTER_S = 0.05
    MAX_EXTRA = 256

    def __init__(self, size: int | None = None, name: str = "mcpgym-worker") -> None:
        self.size = size or min(32, (os.cpu_count() or 1) + 4)
        self._name = name
        self._lock = threading.Lock()
        self._queue: deque[Job] = deque()
        self._sleepers: list[threading.Lock] = []  # one held lock per sleeping thread: its bell
        self._running: set[Job] = set()
        self._live = 0  # threads counted against `size`
        self._awake = 0  # live threads running a call or about to take one
        self._slow = 0  # threads running a slow call (not counted against `size`)
        self._detached = 0  # threads still running a timed-out call
        self._seq = 0
        self._done = 0  # calls finished, ever (read by `_rebalance` to see progress)
        self._done_seen = 0
        self._progress_at = 0.0  # when `_rebalance` last saw a call finish
        self._timer: asyncio.AbstractEventLoop | None = None  # the loop a rebalance is due on

    # -- what callers use ------------------------------------------------------------------------

    async def run(self, fn: Callable[[], Any], timeout_s: float | None = None) -> Any:
        """Run `fn()` in a worker; `TimeoutError` after `timeout_s` (the call is then detached).

        Cancelling the awaiting task detaches the call the same way.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        job = self.submit(fn, done=_to_future(future))
        timer = None if timeout_s is None else loop.call_later(timeout_s, expire, future)
        try:
            return await future
        except Expired:
            self.abandon(job)
            raise TimeoutError from None
        except asyncio.CancelledError:
            self.abandon(job)
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def submit(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        done: Callable[[Job, bool, Any], None] | None = None,
    ) -> Job:
        """Queue `fn(*args, **kwargs)` (call from the event loop); `done(job, ok, value)` runs on
        the loop when it returned (`ok`) or raised (`value` is the exception)."""
        job = Job(fn, args, kwargs or {}, asyncio.get_running_loop(), done or _ignore)
        with self._lock:
            self._queue.append(job)
            if self._awake == 0:
                self._wake()
            elif self._timer is not job.loop:  # someone is awake: look again if work still waits
                self._timer = job.loop  # (a timer of a loop since closed never fires: not ours)
                job.loop.call_later(self.SPILL_AFTER_S, self._rebalance, job.loop)
        return job

    def abandon(self, job: Job) -> str:
        """Give up waiting for `job`: drop it if no thread took it yet, else detach its thread.

        A dropped job never runs and its `done` is never called. Returns the job's state
        afterwards (`dropped`, `detached` or `done`).
        """
        with self._lock:
            if job.state is QUEUED:
                job.state = DROPPED
                self._queue.remove(job)
            elif job.state is RUNNING:
                job.state = DETACHED
                if job.slow:
                    self._slow -= 1
                else:
                    self._live -= 1
                    self._awake -= 1
                self._detached += 1
                if self._queue:  # the stuck thread's place goes to the waiting work
                    self._wake()
            return job.state

    def stats(self) -> dict[str, int]:
        """`{"size", "live", "idle", "queued", "slow", "detached"}`; `detached` threads run
        calls that timed out (each one's instance is unusable until it returns)."""
        with self._lock:
            return {
                "size": self.size,
                "live": self._live,
                "idle": len(self._sleepers),
                "queued": len(self._queue),
                "slow": self._slow,
                "detached": self._detached,
            }

    # -- the threads -----------------------------------------------------------------------------

    def _wake(self) -> bool:
        """With the lock held: one more awake thread (a sleeper, else a new one within bounds)."""
        if self._sleepers:
            self._awake += 1
            self._sleepers.pop().release()
            return True
        if self._live < self.size and self._live + self._slow + self._detached < (
            self.size + self.MAX_EXTRA
        ):
            self._live += 1
            self._awake += 1
            self._seq += 1
            name = f"{self._name}-{self._seq}"
            threading.Thread(target=self._work, name=name, daemon=True).start()
            return True
        return False

    def _rebalance(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop thread, every SPILL_AFTER_S while work waits. Calls finishing means the
        work only waits for the CPU (the GIL): nothing to do. No call finished for a tick: every
        awake thread is stuck inside its call, so wake one more; none for SLOW_AFTER_S: take the
        calls running past SLOW_AFTER_S off the pool's capacity and start threads in their place.
        """
        with self._lock:
            if self._timer is loop:
                self._timer = None
            now = _clock()
            if self._done != self._done_seen:
                self._done_seen = self._done
                self._progress_at = now
            elif self._queue:
                self._wake()
                if now - self._progress_at > self.SLOW_AFTER_S:
                    for job in self._running:
                        if not job.slow and now - job.started > self.SLOW_AFTER_S:
                            job.slow = True
                            self._live -= 1
                            self._awake -= 1
                            self._slow += 1
                    for _ in range(min(len(self._queue), self.size)):
                        if not self._wake():
                            break
            if self._queue and self._timer is None:
                self._timer = loop
                loop.call_later(self.SPILL_AFTER_S, self._rebalance, loop)

    def _work(self) -> None:
        lock, queue, running = self._lock, self._queue, self._running
        bell = threading.Lock()
        while True:
            with lock:
                if not queue:  # nothing to do: sleep until `_wake` rings this thread's bell
                    self._awake -= 1
                    bell.acquire()
                    self._sleepers.append(bell)
                    job = None
                else:
                    job = queue.popleft()
                    job.state = RUNNING
                    job.started = _clock()
                    running.add(job)
            if job is None:
                bell.acquire()  # released by `_wake`, which counted this thread awake again
                bell.release()
                continue
            try:
                ok, value = True, job.fn(*job.args, **job.kwargs)
            except BaseException as exc:  # delivered to the caller, never lost in a thread
                ok, value = False, exc
            stay = self._finish(job)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                job.loop.call_soon_threadsafe(job.done, job, ok, value)
            del job, value  # nothing of the call outlives it in an idle thread
            if not stay:
                return  # another thread took this one's place while its call ran long

    def _finish(self, job: Job) -> bool:
        """Mark `job` done; whether its thread stays in the pool (awake, for the next call)."""
        with self._lock:
            running = self._running
            running.discard(job)
            if job.state is DETACHED:
                self._detached -= 1
                return False
            job.state = DONE
            self._done += 1
            if job.slow:
                self._slow -= 1
                if self._live >= self.size:
                    return False
                self._live += 1  # room again: rejoin
                self._awake += 1
            return True


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
