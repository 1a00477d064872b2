"""The worker process, host side: started in its own process group, one request at a time.

`WorkerProcess.start()` runs `PYTHON bridge_worker.py BACKEND TARGET ...` with
`start_new_session=True` (so `stop()` can kill the worker and everything it started with one
`killpg`), and waits at most `start_timeout_s` for its hello line. `request()` writes one frame and
waits at most `timeout_s` for the answer. Whatever goes wrong — the worker never says hello, dies,
prints something that is not the protocol, does not answer in time — the process group is killed
and a `WorkerError` says what happened, with the tail of the worker's stderr; nothing waits
forever. An `atexit` hook and the worker's own parent watch cover the host dying.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import itertools
import json
import os
import queue
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from mcpgym.errors import ExecutionError

__all__ = ["WORKER_SCRIPT", "WorkerError", "WorkerProcess"]

WORKER_SCRIPT = Path(__file__).with_name("worker") / "bridge_worker.py"
_LIVE: weakref.WeakSet[WorkerProcess] = weakref.WeakSet()
_EOF = object()


class WorkerError(ExecutionError):
    """The worker could not start, crashed, hung or broke the protocol (it has been killed).

    `detail` carries `reason` (`start_timeout`, `load_failed`, `exited`, `timeout`, `protocol`),
    the `exit_code` when known, and `stderr`, the last lines the worker wrote there.
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
    ) -> None:
        self.argv = [str(python), "-u", str(WORKER_SCRIPT), backend, target]
        for entry in paths:
            self.argv += ["--path", str(entry)]
        self.argv += ["--options", json.dumps(options or {})]
        self.start_timeout_s = start_timeout_s
        self.env = env
        self.hello: dict[str, Any] = {}
        self._proc: subprocess.Popen[str] | None = None
        self._frames: queue.Queue[Any] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._drainer: threading.Thread | None = None

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
                text=True,
                encoding="utf-8",
                bufsize=1,
                start_new_session=True,  # its own process group: one killpg stops it all
                env={**os.environ, **(self.env or {})},
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
            line = json.dumps({"id": rid, "op": op, "args": args}, ensure_ascii=False) + "\n"
            try:
                proc.stdin.write(line)
                proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                self._fail("the worker is gone", "exited")
            frame = self._next(timeout_s, "timeout", f"to answer {op!r}")
            if frame.get("id") != rid or "ok" not in frame:
                self._fail(f"the worker answered out of turn: {frame}", "protocol")
            return frame

    def stop(self, grace_s: float = 2.0) -> None:
        """Ask the worker to close, then kill its process group (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _LIVE.discard(self)
        if proc.poll() is None and grace_s > 0 and proc.stdin is not None:
            try:  # closing stdin is the worker's cue to close the foreign env and exit
                proc.stdin.close()
                proc.wait(timeout=grace_s)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        _killpg(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL is not ignorable
            proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()

    def stderr_tail(self) -> str:
        """The last lines the worker wrote to stderr."""
        return "".join(self._stderr)

    # -- internals ----------------------------------------------------------------------------

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._frames.put(line)
        self._frames.put(_EOF)

    def _drain(self, stream: IO[str]) -> None:
        for line in stream:
            self._stderr.append(line)

    def _next(self, timeout_s: float, reason: str, waiting_for: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._frames.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._fail(f"the worker did not {waiting_for} within {timeout_s} s", reason)
            if line is _EOF:
                code = self._wait_exit()
                self._fail(f"the worker exited (code {code})", "exited", exit_code=code)
            if not str(line).strip():
                continue
            try:
                frame = json.loads(line)
            except json.JSONDecodeError:
                self._fail(f"the worker wrote a line that is not JSON: {line[:200]!r}", "protocol")
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
        tail = self.stderr_tail()
        raise WorkerError(
            f"bridge worker ({self.argv[3]}, pid {pid}): {message}",
            reason=reason,
            stderr=tail[-4000:],
            **detail,
        )


def _killpg(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@atexit.register
def _stop_all() -> None:  # the host is exiting: no worker outlives it
    for worker in list(_LIVE):
        worker.stop(grace_s=0)
