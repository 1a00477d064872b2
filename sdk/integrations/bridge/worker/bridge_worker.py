"""The bridge worker: `python bridge_worker.py BACKEND MODULE:ATTR [--path DIR]... [--options J]`.

Run by the *foreign* virtualenv's Python (standard library plus the foreign library; mcpgym need
not be installed there). It loads one backend (`openenv`, `verifiers-classic`, `verifiers-v1`),
which loads the foreign environment, says hello, then answers one request at a time on stdin /
stdout with the line protocol of `bridge_wire`, every line bounded (`--max-line-bytes`: a longer
request is answered as a protocol error, a longer answer becomes an error frame). It is a child
subreaper, so whatever the foreign library starts stays below it even after a `setsid` and its
parent's death; it exits when stdin closes, on `close`, when its memory budget (`--memory-mb`,
`RLIMIT_DATA`) is exhausted, and when its parent process dies, killing that whole family first
(`mcpgym/runtime/proctree.py`, loaded from this checkout by path).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import importlib
import importlib.util
import inspect
import json
import os
import resource
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO, Any

try:
    from . import bridge_wire as wire
except ImportError:  # run as a script: this folder is sys.path[0]
    import bridge_wire as wire  # pyright: ignore[reportMissingImports]


def _load_proctree() -> Any:
    """`mcpgym/runtime/proctree.py` (standard library only): imported where mcpgym is (in
    process, or from a wheel), else loaded by path from this checkout (a foreign venv's worker
    script)."""
    if __package__:
        return importlib.import_module("mcpgym.runtime.proctree")
    path = Path(__file__).resolve().parents[3] / "runtime" / "proctree.py"
    spec = importlib.util.spec_from_file_location("_mcpgym_proctree", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


proctree = _load_proctree()
MARKER = "MCPGYM_BRIDGE_ID"  # set by the host; every process of this worker's family has it
_OVERLONG = object()

BACKENDS = {
    "openenv": "bridge_openenv",
    "verifiers-classic": "bridge_verifiers_classic",
    "verifiers-v1": "bridge_verifiers_v1",
}


def _watch_parent(interval_s: float = 0.25) -> None:
    """Exit (with the whole process group when this worker leads it) once the parent is gone.

    A re-parented worker would otherwise live on holding the foreign environment's resources; a
    hung tool call blocks the request loop, so this runs in its own thread. (A host SIGKILLed
    closes our stdin too, but a tool call in progress would not notice.)
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        _end_family()
        os._exit(4)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _load_backend(name: str, target: str, options: dict[str, Any]) -> Any:
    module_name = BACKENDS.get(name)
    if module_name is None:
        raise wire.BridgeFailure("protocol", f"unknown backend {name!r}; one of {sorted(BACKENDS)}")
    if __package__:
        module = importlib.import_module(f"{__package__}.{module_name}")
    else:
        module = importlib.import_module(module_name)
    return module.Backend(target, options)


async def _answer(backend: Any, op: str, args: dict[str, Any]) -> Any:
    if op == "reset":
        call = backend.reset(args.get("seed"), args.get("episode_id"), args.get("options") or {})
    elif op == "call":
        name, arguments = args.get("name"), args.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise wire.BridgeFailure("protocol", "call needs a string name and object arguments")
        call = backend.call(name, arguments)
    elif op == "step":  # a raw action of the foreign library (backends that speak it)
        step = getattr(backend, "step", None)
        if step is None:
            raise wire.BridgeFailure("unsupported", "this backend takes tool calls, not raw steps")
        call = step(args.get("action"), args.get("timeout_s"))
    elif op == "close":
        call = backend.close()
    else:
        raise wire.BridgeFailure("protocol", f"unknown op {op!r}")
    result = await call if inspect.isawaitable(call) else call
    return wire.jsonable(result if result is not None else {})


def _stdin_lines(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Any], limit: int) -> None:
    """Request lines into the queue, each at most `limit` bytes (the rest of a longer line is
    skipped and it becomes one `_OVERLONG`); `None` at the end of stdin. Each line waits for
    room in the queue (a host that pipelines requests is answered in order, none dropped) and
    the pipe holds the rest: reading ahead stays bounded."""
    stdin = sys.stdin.buffer
    while line := stdin.readline(limit + 1):
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := stdin.readline(65536)) and not rest.endswith(b"\n"):
                pass
            line = _OVERLONG
        if not _hand_over(loop, queue, line):
            return
    _hand_over(loop, queue, None)


def _hand_over(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Any], item: Any) -> bool:
    """Put `item` into the loop's queue from the reader thread, waiting for room; False once the
    loop has stopped (the worker is going: nobody reads any more)."""
    try:
        asyncio.run_coroutine_threadsafe(queue.put(item), loop).result()
    except (RuntimeError, concurrent.futures.CancelledError):
        return False
    return True


async def answer(backend: Any, line: str | bytes) -> tuple[dict[str, Any], bool]:
    """One request line → (its answer frame, whether it was `close`); never raises."""
    rid: Any = None
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise wire.BridgeFailure("protocol", "a request must be a JSON object")
        rid, op = request.get("id"), request.get("op")
        result = await _answer(backend, str(op), request.get("args") or {})
        return {"id": rid, "ok": True, "result": result}, op == "close"
    except MemoryError:  # the budget is spent: the host ends this session (serve exits 5)
        error = {"kind": "memory", "message": "the worker ran out of its memory budget"}
        return {"id": rid, "ok": False, "error": error}, False
    except wire.BridgeFailure as failure:
        return {"id": rid, "ok": False, "error": failure.to_dict()}, False
    except json.JSONDecodeError as exc:
        return {
            "id": rid,
            "ok": False,
            "error": {"kind": "protocol", "message": f"not JSON: {exc}"},
        }, False
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        error = {
            "kind": "internal",
            "message": f"{type(exc).__name__}: {exc}",
            "exception": type(exc).__name__,
        }
        return {"id": rid, "ok": False, "error": error}, False


def load(backend: str, target: str, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Load the backend → (backend, hello frame), or (None, fatal frame) when loading failed."""
    try:
        loaded = _load_backend(backend, target, options)
    except BaseException as exc:  # anything, SystemExit included: the host must hear why
        traceback.print_exc(file=sys.stderr)
        error = {
            "kind": "load",
            "message": f"{type(exc).__name__}: {exc}",
            "exception": type(exc).__name__,
        }
        return None, {"op": "fatal", "error": error}
    hello = {
        "op": "hello",
        "protocol": wire.PROTOCOL,
        "backend": backend,
        "library": getattr(loaded, "library", {}),
        "pid": os.getpid(),
    }
    return loaded, hello


async def serve(backend: Any, out: IO[str], max_line_bytes: int = 32 << 20) -> int:
    """Answer requests until `close` or the end of stdin (5: out of memory)."""
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=1)
    loop = asyncio.get_running_loop()
    reader = threading.Thread(target=_stdin_lines, args=(loop, queue, max_line_bytes), daemon=True)
    reader.start()
    while True:
        line = await queue.get()
        if line is None:  # the host closed our stdin: tidy up, then go
            await _answer(backend, "close", {})
            return 0
        if line is _OVERLONG:
            error = {"kind": "protocol", "message": f"a line over {max_line_bytes} bytes"}
            wire.send(out, {"id": None, "ok": False, "error": error})
            continue
        if not line.strip():
            continue
        frame, closed = await answer(backend, line)
        if frame.get("error", {}).get("kind") == "memory":
            wire.send(out, frame)
            return 5
        _reply(out, frame, max_line_bytes)
        if closed:
            return 0


def _reply(out: IO[str], frame: dict[str, Any], limit: int) -> None:
    """Send `frame`, or, when its line would pass `limit` bytes, a `tool` error saying so."""
    text = wire.encode(frame)
    if len(text) < limit and len(text.encode("utf-8", "replace")) < limit:
        out.write(text + "\n")
        out.flush()
        return
    message = f"the answer is over the bridge's line limit of {limit} bytes"
    error = {"kind": "tool", "message": message, "limit_bytes": limit}
    wire.send(out, {"id": frame.get("id"), "ok": False, "error": error})


def main(argv: list[str] | None = None) -> int:
    """Load the backend, say hello, answer requests; exit status 3 when loading failed."""
    parser = argparse.ArgumentParser(prog="bridge_worker.py", description=__doc__)
    parser.add_argument("backend", choices=sorted(BACKENDS))
    parser.add_argument("target", help="MODULE:ATTR of the foreign environment")
    parser.add_argument("--path", action="append", default=[], help="extra sys.path entry")
    parser.add_argument("--options", default="{}", help="backend options as a JSON object")
    parser.add_argument("--max-line-bytes", type=int, default=32 << 20, help="one line's bound")
    parser.add_argument("--memory-mb", type=int, default=None, help="RLIMIT_DATA of this worker")
    args = parser.parse_args(argv)
    out = wire.protocol_stream()
    proctree.make_subreaper()  # orphans of our family are re-parented to us, not to init
    if args.memory_mb is not None:
        limit = args.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    _watch_parent()
    for entry in reversed(args.path):
        sys.path.insert(1, entry)  # after this folder, before the site packages
    try:
        options = json.loads(args.options)
    except json.JSONDecodeError as exc:
        error = {"kind": "load", "message": f"--options is not JSON: {exc}"}
        wire.send(out, {"op": "fatal", "error": error})
        return 3
    backend, hello = load(args.backend, args.target, options)
    wire.send(out, hello)
    if backend is None:
        return 3
    code = asyncio.run(serve(backend, out, args.max_line_bytes))
    _end_family()
    return code


def _end_family() -> None:
    """Whatever the foreign environment started must not outlive the worker (stdin also ends
    when the host dies): kill our descendants and every process carrying our marker."""
    sys.stderr.flush()
    tag = os.environ.get(MARKER)
    proctree.kill_family(os.getpid(), (MARKER, tag) if tag else None)


if __name__ == "__main__":
    sys.exit(main())
