"""Strict JSON for every transport: what we accept and what we send is RFC 8259 JSON.

Python's `json` accepts `NaN`, `Infinity` and `-Infinity`, turns `1e999` into `inf`, and fails
deep nesting with `RecursionError`; each of those once became a 500 or a reply that was not JSON.
Here non-finite numbers are rejected as invalid input (`InvalidJSON`), nesting deeper than
`MAX_DEPTH` is refused before anything walks it, and `dumps` refuses to emit anything but JSON.

The depth check is nearly free on ordinary messages: a text with fewer than `MAX_DEPTH` brackets
cannot be nested deeper, and counting is done in C; only bracket-heavy texts are walked.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mcpgym.errors import InvalidJSON

__all__ = ["MAX_DEPTH", "dumps", "loads"]

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
# ASCII output: a lone surrogate a client sent (`"\\ud800"`) must not make the reply unencodable
_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def loads(data: str | bytes, what: str = "message") -> Any:
    """Parse strict JSON; `InvalidJSON` (400, -32700) for anything else or nesting too deep."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
        if text.count("[") + text.count("{") > MAX_DEPTH:
            _check_depth_text(text)
        return _decoder.decode(text)
    except InvalidJSON:
        raise
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InvalidJSON(f"{what} is not valid JSON: {_reason(exc)}") from None


def dumps(value: Any) -> str:
    """Compact strict JSON; `ValueError`/`TypeError` for NaN, infinities or non-JSON types."""
    return _encode(value)


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
