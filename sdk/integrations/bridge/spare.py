"""One warm worker per bridged environment class, so a new session does not wait for a load.

Loading a foreign library takes seconds (importing OpenEnv alone is ~10 s of CPU on a small
machine), and every session has its own worker. `mcpgym serve --bridge` loads the target once at
start-up to fail early (`BridgeEnvironment.check_loads`); that worker is kept here instead of
being stopped, the first session takes it, and a new one is started in the background for the
next. A spare that died meanwhile is dropped, and a spare that fails to start is simply not
there: the session then starts its own worker and reports that worker's failure.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from mcpgym.integrations.bridge.inprocess import Worker
from mcpgym.integrations.bridge.process import WorkerError

__all__ = ["SpareWorker"]


class SpareWorker:
    """At most one started, never used worker, made by `make` (a class's `_new_worker`)."""

    def __init__(self, make: Callable[[], Worker]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._worker: Worker | None = None
        self._refilling = False

    def put(self, worker: Worker) -> None:
        """Keep a started worker as the spare (stopping the one it replaces)."""
        with self._lock:
            old, self._worker = self._worker, worker
        if old is not None:
            old.stop(grace_s=0)

    def take(self, wait_s: float = 0.0) -> Worker | None:
        """The spare, if it is alive (a fresh one is then started in the background); while one
        is being started, wait up to `wait_s` for it rather than load a second one beside it."""
        with self._lock:
            if self._worker is None and self._refilling:
                self._ready.wait_for(lambda: not self._refilling, timeout=wait_s)
            worker, self._worker = self._worker, None
        if worker is not None and not worker.alive:
            worker.stop(grace_s=0)
            worker = None
        self._refill()
        return worker

    def stop(self) -> None:
        """Stop the spare, if any."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop(grace_s=0)

    def _refill(self) -> None:
        with self._lock:
            if self._refilling or self._worker is not None:
                return
            self._refilling = True
        threading.Thread(target=self._start_one, name="bridge-spare", daemon=True).start()

    def _start_one(self) -> None:
        worker = self._make()
        try:
            worker.start()
        except WorkerError:  # the session that needs one starts its own and says why
            worker = None
        with self._lock:
            self._refilling = False
            if worker is not None and self._worker is None:
                self._worker, worker = worker, None
            self._ready.notify_all()
        if worker is not None:
            worker.stop(grace_s=0)
