"""Garbage-collector settings for a long-running server (`mcpgym serve` applies them).

CPython's default thresholds (700, 10, 10) were measured to cost a WS server with many sessions a
growing share of every step (issue 17, docs/performance.md). A collection is due when the net
count of new container objects passes the gen-0 threshold; the objects of the calls in flight
(frames, messages, futures; freed by reference counting once a call ends) pile up in bursts
whenever a loop iteration reads many frames, so at K = 1,000 sessions gen-0 ran ~100 times a
second, promoted the in-flight objects, and full (gen-2) passes over everything alive — the ~40k
objects of the imported modules plus ~150 per session — took 100-150 ms each, stalling every
session at once: 85-95 µs of the ~300 µs per step went to the collector. With every step in the
worker pool more objects wait per call, and even a 10,000 threshold still ran gen-0 passes of
15-25 ms five times a second (30-40 µs per step).

`tune(app)` does two things, both standard for servers:
- `gc.freeze()` once start-up is done (after the app's lifespan start-up ran): the objects of
  imported modules and the app live as long as the process, so the collector need never look at
  them again; it scans only what sessions create.
- a gen-0 threshold of `GEN0_THRESHOLD` instead of 700, above the in-flight objects of 1,000
  sessions (in the pool too), so transient objects no longer trigger collections; gen-1 and
  gen-2 keep their defaults. Garbage that only the collector can free (reference cycles) still
  triggers one after at most `GEN0_THRESHOLD` such objects (a few MB).

Reference counting still frees all acyclic garbage at once; only cycles wait for a collection.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncGenerator
from typing import Any

__all__ = ["GEN0_THRESHOLD", "freeze_startup_objects", "tune"]

GEN0_THRESHOLD = 50_000


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
