"""The shared worker pool: long calls leave its capacity, timed-out calls are detached or
dropped, and quick calls never queue behind either."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from mcpgym.runtime.workers import WorkerPool


async def test_quick_calls_do_not_wait_behind_long_ones() -> None:
    pool = WorkerPool(size=2)
    gate = threading.Event()
    try:
        long = [asyncio.ensure_future(pool.run(lambda: gate.wait(30))) for _ in range(6)]
        started = time.monotonic()
        assert await asyncio.wait_for(pool.run(lambda: "quick"), 5) == "quick"
        assert time.monotonic() - started < 1.0  # SLOW_AFTER_S, not the long calls' 30 s
        assert pool.stats()["slow"] >= 2
    finally:
        gate.set()
    assert all(await asyncio.gather(*long))
    for _ in range(200):  # slow threads rejoin or exit: the pool is back to its size
        if pool.stats()["slow"] == 0:
            break
        await asyncio.sleep(0.01)
    stats = pool.stats()
    assert stats["slow"] == 0 and stats["live"] <= 2


async def test_a_timed_out_call_is_detached_and_a_queued_one_never_runs() -> None:
    pool = WorkerPool(size=1)
    gate = threading.Event()
    ran: list[str] = []
    try:
        with pytest.raises(TimeoutError):
            await pool.run(lambda: gate.wait(30), timeout_s=0.05)
        assert pool.stats()["detached"] == 1 and pool.stats()["live"] == 0
        job = pool.submit(lambda: ran.append("queued"))
        assert pool.abandon(job) in ("dropped", "detached", "done")
        assert await pool.run(lambda: "next", timeout_s=5) == "next"  # a replacement thread
    finally:
        gate.set()
    for _ in range(200):
        if pool.stats()["detached"] == 0:
            break
        await asyncio.sleep(0.01)
    assert pool.stats()["detached"] == 0


async def test_errors_reach_the_caller() -> None:
    pool = WorkerPool(size=1)

    def boom() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await pool.run(boom)


async def test_no_call_waits_for_a_thread_that_was_woken_for_another() -> None:
    pool = WorkerPool(size=2)
    for _ in range(200):  # bursts of more calls than threads: each one is picked up
        await asyncio.wait_for(asyncio.gather(*(pool.run(lambda: 1) for _ in range(5))), 5)
    assert pool.stats()["queued"] == 0


async def test_a_blocking_call_does_not_hold_up_quick_ones_while_the_pool_wakes_lazily() -> None:
    # One thread is awake while calls are quick; a call stuck inside (I/O, a lock) must not
    # make the work queued behind it wait for it: another thread is woken within ~SPILL_AFTER_S.
    pool = WorkerPool(size=4)
    gate = threading.Event()
    try:
        stuck = asyncio.ensure_future(pool.run(lambda: gate.wait(30)))
        for _ in range(200):
            if pool.stats()["live"] >= 1 and pool.stats()["queued"] == 0:
                break
            await asyncio.sleep(0.005)
        started = time.monotonic()
        quick = await asyncio.wait_for(asyncio.gather(*(pool.run(lambda: 1) for _ in range(50))), 5)
        assert quick == [1] * 50
        assert time.monotonic() - started < 0.5  # milliseconds, not the stuck call's 30 s
        assert not stuck.done()
    finally:
        gate.set()
    assert await stuck is True


async def test_many_sessions_share_a_few_threads() -> None:
    # 1,000 concurrent callers: every call answered, no thread per caller, the pool back to idle.
    pool = WorkerPool(size=4)
    names: set[str] = set()

    def work(i: int) -> int:
        names.add(threading.current_thread().name)
        return i * 2

    async def caller(i: int) -> int:
        total = 0
        for _ in range(3):
            total += await pool.run(lambda: work(i), timeout_s=30)
        return total

    results = await asyncio.wait_for(asyncio.gather(*(caller(i) for i in range(1000))), 60)
    assert results == [i * 6 for i in range(1000)]
    assert len(names) <= 4  # bounded by `size`, not by the number of callers
    stats = pool.stats()
    assert stats["queued"] == 0 and stats["slow"] == 0 and stats["detached"] == 0
    assert stats["live"] <= 4


async def test_every_thread_hung_still_leaves_room_for_a_bystander() -> None:
    # `size` calls hang past their timeouts: each is detached and replaced, so the next call runs.
    pool = WorkerPool(size=2)
    gate = threading.Event()
    try:
        hung = [pool.run(lambda: gate.wait(30), timeout_s=0.05) for _ in range(4)]
        outcomes = await asyncio.gather(*hung, return_exceptions=True)
        assert all(isinstance(o, TimeoutError) for o in outcomes)
        assert pool.stats()["detached"] >= 2
        started = time.monotonic()
        assert await pool.run(lambda: "bystander", timeout_s=5) == "bystander"
        assert time.monotonic() - started < 1.0
    finally:
        gate.set()


def test_a_closed_loop_leaves_no_stale_rebalance_behind() -> None:
    # The pool outlives event loops (one per asyncio.run): a rebalance due on a loop that closed
    # must not stop the next loop from rebalancing (quick calls would wait for the long one).
    pool = WorkerPool(size=1)
    gate = threading.Event()

    async def first() -> None:
        job = pool.submit(lambda: gate.wait(30))
        pool.submit(lambda: None)  # work waits: a rebalance is due on this loop
        pool.abandon(job)

    asyncio.run(first())
    try:

        async def second() -> float:
            stuck = asyncio.ensure_future(pool.run(lambda: gate.wait(30)))
            await asyncio.sleep(0.01)
            started = time.monotonic()
            assert await asyncio.wait_for(pool.run(lambda: "quick"), 5) == "quick"
            stuck.cancel()
            return time.monotonic() - started

        assert asyncio.run(second()) < 1.0
    finally:
        gate.set()
