"""`InProcessWorker`: a bridge backend run in mcpgym's own process, when its library co-installs.

The same backend classes the worker script runs (`worker/bridge_openenv.py`, ...) and the same
request → frame function (`bridge_worker.answer`), so an environment served in process answers
byte for byte as through a worker in another venv; only the transport differs. The backend runs on
an event loop of its own in a thread of its own (a foreign library's loop-bound objects, such as
OpenEnv's FastMCP client, stay on one loop), and `request` waits for each answer.

What a process gives and a thread cannot: a call that hangs past its timeout cannot be killed.
It is answered as a timeout (`WorkerError`, reason `timeout`), the worker is marked dead (the next
reset starts a new one), and the stuck thread is left to finish on its own; choose the bridge in a
venv (`--python`) for environments that may hang.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

from mcpgym.integrations.bridge.process import WorkerError, WorkerProcess
from mcpgym.integrations.bridge.worker import bridge_worker

__all__ = ["InProcessWorker", "Worker"]


class InProcessWorker:
    """The `WorkerProcess` interface (`start`, `request`, `stop`, `alive`, `hello`, `pid`) over
    a backend loaded in this process.

    Args:
        backend: the bridge backend (`openenv`, `verifiers-classic`, `verifiers-v1`).
        target: `MODULE:ATTR` of the foreign environment, imported here.
        paths: `sys.path` entries added (at the end) so `target` imports.
        options: backend options.
        start_timeout_s: how long loading may take.
    """

    def __init__(
        self,
        backend: str,
        target: str,
        *,
        paths: Sequence[str] = (),
        options: dict[str, Any] | None = None,
        start_timeout_s: float = 60.0,
    ) -> None:
        self.backend_name = backend
        self.target = target
        self.paths = [str(p) for p in paths]
        self.options = dict(options or {})
        self.start_timeout_s = start_timeout_s
        self.hello: dict[str, Any] = {}
        self._backend: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._ids = 0

    @property
    def pid(self) -> int | None:
        """This process's pid while the backend is loaded."""
        return os.getpid() if self.alive else None

    @property
    def alive(self) -> bool:
        """Whether the backend is loaded and its loop runs."""
        return self._loop is not None and self._backend is not None

    def start(self) -> dict[str, Any]:
        """Load the backend on its own loop; its hello, or `WorkerError` (`load_failed`)."""
        for entry in self.paths:
            if entry not in sys.path:
                sys.path.append(entry)
        loop = asyncio.new_event_loop()

        def run() -> None:
            loop.run_forever()
            loop.close()

        threading.Thread(target=run, name="bridge-in-process", daemon=True).start()
        self._loop = loop

        async def load() -> tuple[Any, dict[str, Any]]:
            return bridge_worker.load(self.backend_name, self.target, self.options)

        try:
            backend, frame = self._run(load(), self.start_timeout_s, "to load")
        except WorkerError:
            self._end_loop()
            raise
        if backend is None:
            self._end_loop()
            message = (frame.get("error") or {}).get("message")
            raise WorkerError(
                f"bridge ({self.backend_name}, in process): the environment could not load: "
                f"{message}",
                reason="load_failed",
            )
        self._backend, self.hello = backend, frame
        return frame

    def request(self, op: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Answer one request as the worker would: its frame (`ok` true or false)."""
        with self._lock:
            if not self.alive:
                raise WorkerError("the worker is not running (reset to start one)", reason="exited")
            self._ids += 1
            line = json.dumps({"id": self._ids, "op": op, "args": args})
            frame, _ = self._run(
                bridge_worker.answer(self._backend, line), timeout_s, f"to answer {op!r}"
            )
            return frame

    def stop(self, grace_s: float = 2.0) -> None:
        """Close the foreign environment (within `grace_s`) and end the loop (idempotent)."""
        backend, self._backend = self._backend, None
        if backend is not None and self._loop is not None and grace_s > 0:
            with contextlib.suppress(Exception):  # closing is best effort, as in the worker
                self._run(bridge_worker.answer(backend, '{"op": "close"}'), grace_s, "to close")
        self._end_loop()

    def stderr_tail(self) -> str:
        """Nothing: in process, the environment writes to this process's own streams."""
        return ""

    # -- internals ----------------------------------------------------------------------------

    def _run(self, coro: Any, timeout_s: float, waiting_for: str) -> Any:
        loop = self._loop
        if loop is None:
            coro.close()
            raise WorkerError("the worker is not running (reset to start one)", reason="exited")
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            self._backend = None  # a stuck call: this backend serves no more requests
            self._end_loop()
            raise WorkerError(
                f"bridge ({self.backend_name}, in process): no answer {waiting_for} within "
                f"{timeout_s} s",
                reason="timeout",
            ) from None

    def _end_loop(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)


Worker = WorkerProcess | InProcessWorker
"""A worker in another venv's process, or the same backend in this one (no `python` given)."""
