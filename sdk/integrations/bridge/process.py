"""The worker process, host side: started in its own process group, one request at a time.

`WorkerProcess.start()` runs `PYTHON bridge_worker.py BACKEND TARGET ...` with
`start_new_session=True` and a marker in its environment (`MCPGYM_BRIDGE_ID`), and waits at most
`start_timeout_s` for its hello line. `request()` writes one frame and waits at most `timeout_s`
for the answer. Whatever goes wrong — the worker never says hello, dies, prints something that is
not the protocol, writes a line longer than `max_line_bytes`, runs out of its memory budget, does
not answer in time — the worker and its whole family are killed and a `WorkerError` says what
happened, with the tail of the worker's stderr; nothing waits forever and nothing is buffered
without a bound (a line is read up to the limit, at most two lines wait unread, stderr keeps a
16 KiB tail).

*Its whole family*: the worker's process group, every descendant (the worker is a child
subreaper, so a `setsid` grandchild whose parent died is still below it) and every process
carrying the marker (`mcpgym.runtime.proctree`). An `atexit` hook covers the host exiting;
the worker's own parent watch covers the host being SIGKILLed (it kills the same family, then
itself).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import queue
import subprocess
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from mcpgym.errors import ExecutionError, InvalidJSON
from mcpgym.runtime import strict_json
from mcpgym.runtime.proctree import kill_family

__all__ = ["MARKER", "MAX_LINE_BYTES", "WORKER_SCRIPT", "WorkerError", "WorkerProcess"]

WORKER_SCRIPT = Path(__file__).with_name("worker") / "bridge_worker.py"
MARKER = "MCPGYM_BRIDGE_ID"
"""The environment variable every process of a worker's family inherits (its value: one id)."""
MAX_LINE_BYTES = 32 * 1024 * 1024
"""The default bound of one protocol line, either way (a frame carries a whole tool result)."""
_TAIL_BYTES = 16 * 1024
_LIVE: weakref.WeakSet[WorkerProcess] = weakref.WeakSet()
_EOF = object()
_TOO_LONG = object()


class WorkerError(ExecutionError):
    """The worker could not start, crashed, hung or broke the protocol (it has been killed).

    `detail` carries `reason` (`start_timeout`, `load_failed`, `exited`, `timeout`, `protocol`,
    `memory`, or `request_too_large` — the only one after which the worker still runs), the
    `exit_code` when known, and `stderr`, the last lines the worker wrote there.
    """


class WorkerProcess:
    """One worker: `start()`, then `request(op, args)` until `stop()`.

    Args:
        python: the foreign virtualenv's interpreter.
        backend: the worker backend (`openenv`, `verifiers-classic`, `verifiers-v1`).
        target: `MODULE:ATTR` of the foreign environment, imported by the worker.
        paths: extra `sys.path` entries for the worker.
        options: backend options (JSON-able).
        start_timeout_s: how long loading may take before the worker is killed.
        env: extra environment variables for the worker.
        max_line_bytes: the bound of one protocol line, either way.
        memory_limit_mb: the worker's data-segment limit (`RLIMIT_DATA`, inherited by what it
            starts); past it the worker's allocations fail and the session ends with reason
            `memory`. `None`: no limit of its own.
    """

    def __init__(
        self,
        python: str | os.PathLike[str],
        backend: str,
        target: str,
        *,
        paths: Sequence[str] = (),
        options: dict[str, Any] | None = None,
        start_timeout_s: float = 60.0,
        env: dict[str, str] | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        memory_limit_mb: int | None = None,
    ) -> None:
        self.argv = [str(python), "-u", str(WORKER_SCRIPT), backend, target]
        for entry in paths:
            self.argv += ["--path", str(entry)]
        self.argv += ["--options", json.dumps(options or {})]
        self.argv += ["--max-line-bytes", str(max_line_bytes)]
        if memory_limit_mb is not None:
            self.argv += ["--memory-mb", str(memory_limit_mb)]
        self.backend = backend
        self.start_timeout_s = start_timeout_s
        self.env = env
        self.max_line_bytes = max_line_bytes
        self.memory_limit_mb = memory_limit_mb
        self.marker = (MARKER, uuid.uuid4().hex)
        self.hello: dict[str, Any] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._frames: queue.Queue[Any] = queue.Queue(maxsize=2)  # backpressure on a chatty worker
        self._stderr = bytearray()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._drainer: threading.Thread | None = None
        self._stopped = threading.Event()

    @property
    def pid(self) -> int | None:
        """The worker's pid (also its process group id), while it runs."""
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        """Whether the worker process is running."""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> dict[str, Any]:
        """Start the worker and wait for its hello; returns the hello frame."""
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group
                env={**os.environ, **(self.env or {}), self.marker[0]: self.marker[1]},
            )
        except OSError as exc:
            raise WorkerError(
                f"cannot run the worker's Python {self.argv[0]!r}: {exc}", reason="load_failed"
            ) from None
        _LIVE.add(self)
        assert self._proc.stdout is not None and self._proc.stderr is not None
        threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, args=(self._proc.stderr,), daemon=True)
        self._drainer.start()
        frame = self._next(self.start_timeout_s, "start_timeout", "to start (no hello)")
        if frame.get("op") == "fatal":
            error = frame.get("error") or {}
            self._fail(f"the worker could not load: {error.get('message')}", "load_failed")
        if frame.get("op") != "hello" or frame.get("protocol") != 1:
            self._fail(f"the worker's first frame is not a protocol-1 hello: {frame}", "protocol")
        self.hello = frame
        return frame

    def request(self, op: str, args: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and return the worker's answer frame (`ok` true or false)."""
        with self._lock:  # one request in flight: the worker answers in order
            proc = self._proc
            if proc is None or proc.stdin is None:
                raise WorkerError("the worker is not running (reset to start one)", reason="exited")
            rid = next(self._ids)
            # ASCII: a lone surrogate in the arguments travels as its JSON escape
            line = json.dumps({"id": rid, "op": op, "args": args}).encode() + b"\n"
            if len(line) > self.max_line_bytes:  # refused here: the worker never sees it
                raise WorkerError(
                    f"the {op!r} request is {len(line)} bytes, over the bridge's line limit of "
                    f"{self.max_line_bytes} bytes",
                    reason="request_too_large",
                    limit_bytes=self.max_line_bytes,
                )
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                self._fail("the worker is gone", "exited")
            frame = self._next(timeout_s, "timeout", f"to answer {op!r}")
            if frame.get("id") != rid or "ok" not in frame:
                self._fail(f"the worker answered out of turn: {str(frame)[:200]}", "protocol")
            if not frame["ok"] and (frame.get("error") or {}).get("kind") == "memory":
                limit = self.memory_limit_mb
                self._fail(f"the worker ran out of its memory budget ({limit} MiB)", "memory")
            return frame

    def stop(self, grace_s: float = 2.0) -> None:
        """Ask the worker to close, then kill its whole family (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._stopped.set()
        _LIVE.discard(self)
        if proc.poll() is None and grace_s > 0 and proc.stdin is not None:
            try:  # closing stdin is the worker's cue to close the foreign env and exit
                proc.stdin.close()
                proc.wait(timeout=grace_s)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        # the leader stays unreaped until here, so its pid (and group id) cannot be reused
        kill_family(proc.pid, self.marker)
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL is not ignorable
            proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()

    def stderr_tail(self) -> str:
        """The last lines the worker wrote to stderr (at most 16 KiB)."""
        return bytes(self._stderr).decode("utf-8", "replace")

    # -- internals ----------------------------------------------------------------------------

    def _read(self, stream: IO[bytes]) -> None:
        """Protocol lines into the queue, each bounded; an over-long line ends the reading
        (the worker is then killed), and a closed pipe is the end, never a traceback."""
        item: Any = _EOF
        try:
            while line := stream.readline(self.max_line_bytes + 1):
                if len(line) > self.max_line_bytes and not line.endswith(b"\n"):
                    item = _TOO_LONG
                    break
                self._offer(line)
        except (OSError, ValueError):  # the pipe was closed under us by stop()
            pass
        self._offer(item)

    def _offer(self, item: Any) -> None:
        while not self._stopped.is_set():  # a stopped worker's lines are nobody's
            with contextlib.suppress(queue.Full):
                self._frames.put(item, timeout=0.2)
                return

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            while chunk := stream.read1(65536):  # type: ignore[attr-defined]
                self._stderr += chunk
                del self._stderr[:-_TAIL_BYTES]
        except (OSError, ValueError):
            pass

    def _next(self, timeout_s: float, reason: str, waiting_for: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._frames.get(timeout=max(0.0, min(left, 0.2)))
            except queue.Empty:
                if self._stopped.is_set():  # stopped by another thread (a close) meanwhile
                    self._fail("the worker was stopped", "exited")
                if left <= 0.2:
                    self._fail(f"the worker did not {waiting_for} within {timeout_s} s", reason)
                continue
            if line is _EOF:
                code = self._wait_exit()
                self._fail(f"the worker exited (code {code})", "exited", exit_code=code)
            if line is _TOO_LONG:
                self._fail(
                    f"the worker wrote a line longer than {self.max_line_bytes} bytes", "protocol"
                )
            if not line.strip():
                continue
            try:  # the worker writes strict JSON (bridge_wire.encode): anything else is not it
                frame = strict_json.loads(line, "the worker's line")
            except InvalidJSON as exc:
                self._fail(f"{exc.message}: {line[:200]!r}", "protocol")
            if not isinstance(frame, dict):
                self._fail(
                    f"the worker wrote a frame that is not an object: {line[:200]!r}", "protocol"
                )
            return frame  # pyright: ignore[reportUnknownVariableType]

    def _wait_exit(self) -> int | None:
        proc = self._proc
        if proc is None:
            return None
        try:
            return proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return None

    def _fail(self, message: str, reason: str, **detail: Any) -> NoReturn:
        pid = self.pid
        self.stop(grace_s=0)
        if self._drainer is not None:  # the worker is dead: its stderr ends soon
            self._drainer.join(timeout=2)
        raise WorkerError(
            f"bridge worker ({self.backend}, pid {pid}): {message}",
            reason=reason,
            stderr=self.stderr_tail()[-4000:],
            **detail,
        )


@atexit.register
def _stop_all() -> None:  # the host is exiting: no worker outlives it
    for worker in list(_LIVE):
        worker.stop(grace_s=0)
