"""Strict JSON for every transport: what we accept and what we send is RFC 8259 JSON.

Python's `json` accepts `NaN`, `Infinity` and `-Infinity`, turns `1e999` into `inf`, and fails
deep nesting with `RecursionError`; each of those once became a 500 or a reply that was not JSON.
Here non-finite numbers are rejected as invalid input (`InvalidJSON`), nesting deeper than
`MAX_DEPTH` is refused before anything walks it, and `dumps` refuses to emit anything but JSON.

The depth check is nearly free on ordinary messages: a text with fewer than `MAX_DEPTH` brackets
cannot be nested deeper, and counting is done in C; only bracket-heavy texts are walked.

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
import math
import re
from collections.abc import Callable
from typing import Any

from mcpgym.errors import InvalidJSON, ResultTooLarge
from mcpgym.runtime.json_size import size_at_least

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

MAX_DEPTH = 64
"""Deepest accepted nesting of arrays and objects in a request (far beyond any tool argument)."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of the range of a finite number")
    return value


_decoder = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
# the C scanner: one value from an index, no whitespace handling (untyped in the stubs)
_scan: Any = getattr(_decoder, "scan_once")  # noqa: B009
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


def loads(data: str | bytes, what: str = "message") -> Any:
    """Parse strict JSON; `InvalidJSON` (400, -32700) for anything else or nesting too deep."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
        if text.count("[") + text.count("{") > MAX_DEPTH:
            _check_depth_text(text)
        try:  # a frame is one value with nothing around it: the scanner alone reads it
            value, end = _scan(text, 0)
        except StopIteration:  # leading whitespace or no value: the full parser says which
            return _decoder.decode(text)
        if end != len(text):  # trailing whitespace or extra data
            return _decoder.decode(text)
        return value
    except InvalidJSON:
        raise
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InvalidJSON(f"{what} is not valid JSON: {_reason(exc)}") from None


def dumps(value: Any) -> str:
    """Compact strict JSON; `ValueError`/`TypeError` for NaN, infinities or non-JSON types
    (and `ValueError` for a structure that contains itself)."""
    try:
        if _fast_encode is None:
            return _encode(value)
        return "".join(_fast_encode(value, 0))
    except RecursionError:  # no circular-reference bookkeeping: a cycle recurses until here
        raise ValueError("the value contains itself or is nested too deep for JSON") from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return f"nested deeper than {MAX_DEPTH}"
    return str(exc)[:200]


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_SAME = str.maketrans("{}", "[]")


def _check_depth_text(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH without a Python-level loop over the text.

    Strings are removed, then only brackets kept; each `replace` then peels one level of empty
    pairs, so a text nested at most MAX_DEPTH deep is empty after MAX_DEPTH passes.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_SAME)
    for _ in range(MAX_DEPTH):
        peeled = brackets.replace("[]", "")
        if not peeled or peeled == brackets:  # done, or unbalanced (the parser will say so)
            return
        brackets = peeled
    raise InvalidJSON(f"JSON is nested deeper than {MAX_DEPTH} levels")


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
