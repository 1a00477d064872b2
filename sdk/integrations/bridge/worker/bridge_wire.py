"""The bridge's line protocol, worker side (standard library only; see docs/interop.md).

Every message is one JSON object on one line (UTF-8, `\\n`-terminated) on the worker's original
stdout; the worker's fd 1 is pointed at stderr first, so a library that prints cannot corrupt
the stream. Requests come on stdin.

    worker → host, once:  {"op": "hello", "protocol": 1, "backend": B, "library": {...}, "pid": N}
                     or:  {"op": "fatal", "error": {"kind": "load", "message": ...}}  (then exit 3)
    host → worker:        {"id": N, "op": "reset" | "call" | "close", "args": {...}}
    worker → host:        {"id": N, "ok": true, "result": {...}}
                     or:  {"id": N, "ok": false, "error": {"kind": K, "message": ..., ...}}

`reset` args `{"seed", "episode_id", "options"}` → `{"tools": [{"name", "description",
"input_schema"}], "observation": {...}}`; `call` args `{"name", "arguments"}` → `{"output",
"reward", "done"}`; `step` args `{"action", "timeout_s"}` → `{"observation", "state"}` (a raw
action of the library, answered with its own serialisation; the `openenv` backend); `close` →
`{}`, then the worker exits 0. Error kinds: `invalid_args`,
`unknown_tool`, `tool` (the foreign tool failed: data for the agent), `no_episode`,
`unsupported` (a feature of the library that does not map), `protocol`, `internal`, `memory`
(the worker's memory budget is spent; it exits after this frame).
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

PROTOCOL = 1
KINDS = (
    "memory",
    "invalid_args",
    "unknown_tool",
    "tool",
    "no_episode",
    "unsupported",
    "protocol",
    "internal",
)


class BridgeFailure(Exception):
    """A failure the worker reports as a structured error of one of `KINDS`."""

    def __init__(self, kind: str, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.kind = kind if kind in KINDS else "internal"
        self.message = message
        self.detail = detail

    def to_dict(self) -> dict[str, Any]:
        """The wire form of the error."""
        return {"kind": self.kind, "message": self.message, **self.detail}


def protocol_stream() -> IO[str]:
    """The protocol's output stream: the original stdout, after fd 1 is pointed at stderr.

    Libraries print (progress bars, logging set up on stdout); only this stream carries frames.
    """
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def encode(message: dict[str, Any]) -> str:
    """One frame's line, without its `\\n` (non-JSON values become strings)."""
    return json.dumps(message, ensure_ascii=False, default=str, allow_nan=False)


def send(stream: IO[str], message: dict[str, Any]) -> None:
    """Write one frame (non-JSON values become strings rather than killing the worker)."""
    stream.write(encode(message) + "\n")
    stream.flush()


def jsonable(value: Any) -> Any:
    """A JSON value for `value`: pydantic models dumped, dataclasses and objects as dicts."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return jsonable(dump(mode="json"))
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses

        return jsonable(dataclasses.asdict(value))
    return str(value)


def load_attr(target: str) -> Any:
    """`module:attr` (dots allowed in attr) imported under the worker's interpreter."""
    import importlib

    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise BridgeFailure("protocol", f"target {target!r} is not MODULE:ATTR")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj
