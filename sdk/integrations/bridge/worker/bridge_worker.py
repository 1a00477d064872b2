"""The bridge worker: `python bridge_worker.py BACKEND MODULE:ATTR [--path DIR]... [--options J]`.

Run by the *foreign* virtualenv's Python (standard library plus the foreign library; mcpgym need
not be installed there). It loads one backend (`openenv`, `verifiers-classic`, `verifiers-v1`),
which loads the foreign environment, says hello, then answers one request at a time on stdin /
stdout with the line protocol of `bridge_wire`. It exits when stdin closes, on `close`, and
when its parent process dies, killing its own process group (whatever the foreign library started).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import json
import os
import signal
import sys
import threading
import time
import traceback
from typing import IO, Any

try:
    from . import bridge_wire as wire
except ImportError:  # run as a script: this folder is sys.path[0]
    import bridge_wire as wire  # pyright: ignore[reportMissingImports]

BACKENDS = {
    "openenv": "bridge_openenv",
    "verifiers-classic": "bridge_verifiers_classic",
    "verifiers-v1": "bridge_verifiers_v1",
}


def _watch_parent(interval_s: float = 0.25) -> None:
    """Exit (with the whole process group when this worker leads it) once the parent is gone.

    A re-parented worker would otherwise live on holding the foreign environment's resources; a
    hung tool call blocks the request loop, so this runs in its own thread.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        if os.getpgrp() == os.getpid():  # our own group (the host starts us in a new session)
            os.killpg(os.getpid(), signal.SIGKILL)
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
    elif op == "close":
        call = backend.close()
    else:
        raise wire.BridgeFailure("protocol", f"unknown op {op!r}")
    result = await call if inspect.isawaitable(call) else call
    return wire.jsonable(result if result is not None else {})


def _stdin_lines(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
    for line in sys.stdin:
        loop.call_soon_threadsafe(queue.put_nowait, line)
    loop.call_soon_threadsafe(queue.put_nowait, None)


async def serve(backend: Any, out: IO[str]) -> int:
    """Answer requests until `close` or the end of stdin."""
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    threading.Thread(target=_stdin_lines, args=(loop, queue), daemon=True).start()
    while True:
        line = await queue.get()
        if line is None:  # the host closed our stdin: tidy up, then go
            await _answer(backend, "close", {})
            return 0
        if not line.strip():
            continue
        rid: Any = None
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise wire.BridgeFailure("protocol", "a request must be a JSON object")
            rid, op = request.get("id"), request.get("op")
            args = request.get("args") or {}
            result = await _answer(backend, str(op), args)
            wire.send(out, {"id": rid, "ok": True, "result": result})
        except wire.BridgeFailure as failure:
            wire.send(out, {"id": rid, "ok": False, "error": failure.to_dict()})
            continue
        except json.JSONDecodeError as exc:
            error = {"kind": "protocol", "message": f"not JSON: {exc}"}
            wire.send(out, {"id": rid, "ok": False, "error": error})
            continue
        except Exception as exc:
            traceback.print_exc(file=sys.stderr)
            error = {
                "kind": "internal",
                "message": f"{type(exc).__name__}: {exc}",
                "exception": type(exc).__name__,
            }
            wire.send(out, {"id": rid, "ok": False, "error": error})
            continue
        if request.get("op") == "close":
            return 0


def main(argv: list[str] | None = None) -> int:
    """Load the backend, say hello, answer requests; exit status 3 when loading failed."""
    parser = argparse.ArgumentParser(prog="bridge_worker.py", description=__doc__)
    parser.add_argument("backend", choices=sorted(BACKENDS))
    parser.add_argument("target", help="MODULE:ATTR of the foreign environment")
    parser.add_argument("--path", action="append", default=[], help="extra sys.path entry")
    parser.add_argument("--options", default="{}", help="backend options as a JSON object")
    args = parser.parse_args(argv)
    out = wire.protocol_stream()
    sys.stdin.reconfigure(encoding="utf-8")  # type: ignore[union-attr]  # whatever the locale
    _watch_parent()
    for entry in reversed(args.path):
        sys.path.insert(1, entry)  # after this folder, before the site packages
    try:
        options = json.loads(args.options)
        backend = _load_backend(args.backend, args.target, options)
    except BaseException as exc:  # anything, SystemExit included: the host must hear why
        traceback.print_exc(file=sys.stderr)
        error = {
            "kind": "load",
            "message": f"{type(exc).__name__}: {exc}",
            "exception": type(exc).__name__,
        }
        wire.send(out, {"op": "fatal", "error": error})
        return 3
    hello = {
        "op": "hello",
        "protocol": wire.PROTOCOL,
        "backend": args.backend,
        "library": getattr(backend, "library", {}),
        "pid": os.getpid(),
    }
    wire.send(out, hello)
    code = asyncio.run(serve(backend, out))
    _end_group()
    return code


def _end_group() -> None:
    """Whatever the foreign environment started must not outlive the worker (stdin also ends
    when the host dies): kill our process group, ourselves last, when we lead it."""
    sys.stderr.flush()
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
