"""Garbage-collector settings for a long-running server (`mcpgym serve` applies them).

CPython's default thresholds (700, 10, 10) were measured to cost a WS server with many sessions a
growing share of every step (issue 17, docs/performance.md): the net count of new container
objects crosses 700 whenever a loop iteration has many calls in flight, so at K = 1,000
sessions gen-0 ran ~100 times a second, promoted the in-flight objects, and full (gen-2) passes
over everything alive — the ~40k objects of the imported modules plus ~150 per session — took
100-150 ms each, stalling every session at once. Server CPU per step rose from ~210 µs at
K = 100 to ~300 µs at K = 1,000, 85-95 µs of it in the collector.

`tune(app)` does two things, both standard for servers:
- `gc.freeze()` once start-up is done (after the app's lifespan start-up ran): the objects of
  imported modules and the app live as long as the process, so the collector need never look at
  them again; it scans only what sessions create.
- a gen-0 threshold of `GEN0_THRESHOLD` instead of 700, so the objects of a batch of in-flight
  calls (freed by reference counting a moment later) no longer trigger a collection each time;
  gen-1 and gen-2 keep their defaults, so cyclic garbage is still collected, just less often.

Reference counting still frees all acyclic garbage at once; only cycles wait for a collection.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncGenerator
from typing import Any

__all__ = ["GEN0_THRESHOLD", "freeze_startup_objects", "tune"]

GEN0_THRESHOLD = 10_000


def freeze_startup_objects() -> int:
    """Collect once, then move every object alive now to the permanent generation (never
    scanned again). Returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def tune(app: Any, gen0_threshold: int = GEN0_THRESHOLD) -> None:
    """Raise the gen-0 threshold now and freeze the start-up objects once `app`'s lifespan
    start-up has run (a Starlette app: its `router.lifespan_context` is wrapped; no cost per
    request). Process-wide: meant for the process that serves `app`, not for a library user."""
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(gen0_threshold, gen1, gen2)
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(target: Any) -> AsyncGenerator[Any]:
        async with inner(target) as state:
            freeze_startup_objects()
            yield state

    app.router.lifespan_context = lifespan
