"""Wait for a condition with a deadline instead of sleeping a fixed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T], *, timeout: float = 5.0, interval: float = 0.01, what: str = ""
) -> T:
    """Poll `predicate` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate!r}")
        time.sleep(interval)


async def await_until(
    predicate: Callable[[], Awaitable[T]],
    *,
    within: float = 5.0,
    interval: float = 0.01,
    what: str = "",
) -> T:
    """`wait_until` for async predicates (polls on the running loop for `within` seconds)."""
    deadline = time.monotonic() + within
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within} s waiting for {what or predicate!r}")
        await asyncio.sleep(interval)
