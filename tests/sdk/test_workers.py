"""The shared worker pool: long calls leave its capacity, timed-out calls are detached or
dropped, and quick calls never queue behind either."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from mcpgym._workers import WorkerPool


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
