"""Strict JSON for every transport: what we accept and what we send is RFC 8259 JSON.

What we accept goes through `loads` (mcpgym.runtime.strict_json: non-finite numbers and nesting
deeper than `MAX_DEPTH` are invalid input), and `dumps` refuses to emit anything but JSON.

What we send is bounded too. A tool may return anything up to the memory of the machine; one
100 MiB result, encoded on the event loop, once stalled every other session for two seconds.
So every transport measures a tool's result against `ServerSettings.max_result_bytes`
(`DEFAULT_MAX_RESULT_BYTES`, `--max-result-bytes`) before sending it (`check_result`) and answers
a larger one with a tool error the agent can act on (`ResultTooLarge`: `reason`
`RESULT_TOO_LARGE`, the limit and the size seen). Measuring costs ~1 µs for the common small
result (`is_small`: a walk of a few hundred nodes at most, inline); any other result is measured
in a worker thread, where the walk gives the loop the GIL back as it goes, and its reply is
encoded there, part by part (`encode_reply`, `dumps_chunked`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from mcpgym.errors import ResultTooLarge
from mcpgym.runtime.json_size import size_at_least
from mcpgym.runtime.strict_json import MAX_DEPTH, loads

__all__ = [
    "BIG_REPLY_BYTES",
    "DEFAULT_MAX_RESULT_BYTES",
    "MAX_DEPTH",
    "check_result",
    "dumps",
    "dumps_chunked",
    "encode_reply",
    "is_small",
    "loads",
    "size_at_least",
]

# ASCII output: a lone surrogate a client sent (`"\\ud800"`) must not make the reply unencodable
_encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False, check_circular=False)
_encode = _encoder.encode


def _c_encoder() -> Any:
    """The C encoder `JSONEncoder.encode` builds on every call, built once (the per-call setup
    is a third of what encoding an observation costs); None where this Python lacks it."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        enc = make(None, _encoder.default, json.encoder.encode_basestring_ascii, None,
                   ":", ",", False, False, False)  # fmt: skip
        if "".join(enc({"a": [1, 2.5, None, True, "\u00e9"]}, 0)) != _encode(
            {"a": [1, 2.5, None, True, "\u00e9"]}
        ):
            return None
    except Exception:  # another signature: keep the documented path
        return None
    return enc


_fast_encode = _c_encoder()


def dumps(value: Any) -> str:
    """Compact strict JSON; `ValueError`/`TypeError` for NaN, infinities or non-JSON types
    (and `ValueError` for a structure that contains itself)."""
    try:
        if _fast_encode is None:
            return _encode(value)
        return "".join(_fast_encode(value, 0))
    except RecursionError:  # no circular-reference bookkeeping: a cycle recurses until here
        raise ValueError("the value contains itself or is nested too deep for JSON") from None


_CHUNK = 64 * 1024
_BATCH = 256  # list items encoded per call: each call holds the GIL for a short while only


def dumps_chunked(value: Any, encode: Any = None) -> str:
    """`dumps(value)` built from the encodings of its parts, for a worker thread.

    The C encoder holds the GIL for one whole call: encoding a large reply in one call stalls
    the event loop however it is scheduled. Encoding it part by part gives the loop the GIL
    back between parts: a long list `_BATCH` items at a time, a big object member by member;
    only a part under 64 KiB, or a single string, is encoded in one call. `encode` replaces
    `dumps` for the parts (whitespace between parts is then compact).
    """
    enc = dumps if encode is None else encode
    if isinstance(value, list | tuple):
        items: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        if len(items) > _BATCH:
            batches = (enc(items[i : i + _BATCH])[1:-1] for i in range(0, len(items), _BATCH))
            return "[" + ",".join(batches) + "]"
        if size_at_least(items, _CHUNK, _BATCH) > _CHUNK:
            return "[" + ",".join(dumps_chunked(v, enc) for v in items) + "]"
    elif isinstance(value, dict) and size_at_least(value, _CHUNK, _BATCH) > _CHUNK:
        members: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        parts = [enc(str(k)) + ":" + dumps_chunked(v, enc) for k, v in members.items()]
        return "{" + ",".join(parts) + "}"
    return enc(value)


DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024
"""The default cap on one tool result's JSON (the same as the largest accepted request)."""
BIG_REPLY_BYTES = 32 * 1024
"""Replies that may be this big or bigger are measured and encoded in a worker thread."""
_NODES = 256  # more nodes than this: not obviously small (the inline walk stays ~50 µs)


def is_small(value: Any) -> bool:
    """Whether `value` is certainly under `BIG_REPLY_BYTES` of JSON (cheap: a bounded walk)."""
    return size_at_least(value, BIG_REPLY_BYTES, _NODES) <= BIG_REPLY_BYTES


async def check_result(value: Any, limit: int | None, tool: str) -> bool:
    """Raise `ResultTooLarge` when `value`'s JSON exceeds `limit`; returns whether it is big.

    A small value is answered inline; any other is measured in a worker thread.
    """
    if is_small(value):
        return False
    if limit is None:
        return True
    size = await asyncio.to_thread(size_at_least, value, limit)
    if size > limit:
        raise ResultTooLarge(tool, limit, size)
    return True


async def encode_reply(value: Any, encode: Callable[[Any], str] = dumps) -> str:
    """`encode(value)`, inline for a small value, else part by part in a worker thread."""
    if is_small(value):
        return encode(value)
    return await asyncio.to_thread(dumps_chunked, value, encode)
