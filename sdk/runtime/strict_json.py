"""Strict JSON in: what mcpgym accepts is RFC 8259 JSON, nothing more, nested at most `MAX_DEPTH`.

Python's `json` accepts `NaN`, `Infinity` and `-Infinity`, turns `1e999` into `inf`, and fails
deep nesting with `RecursionError`; each of those once became a 500 or a reply that was not JSON.
`loads` rejects non-finite numbers as invalid input (`InvalidJSON`) and refuses nesting deeper
than `MAX_DEPTH` before anything walks it. Every transport parses with it (through
`mcpgym.servers.wire_json`), and so does the bridge host reading its workers' lines.

The depth check is nearly free on ordinary messages: a text with fewer than `MAX_DEPTH` brackets
cannot be nested deeper, and counting is done in C; only bracket-heavy texts are walked.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mcpgym.errors import InvalidJSON

__all__ = ["MAX_DEPTH", "loads"]

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


def loads(data: str | bytes, what: str = "message") -> Any:
    """Parse strict JSON; `InvalidJSON` (400, -32700) for anything else or nesting too deep."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes | bytearray) else data
        if text.count("[") + text.count("{") > MAX_DEPTH:
            _check_depth_text(text)
        try:  # a frame is one value with nothing around it: the scanner alone reads it
            value, end = _scan(text, 0)
        except StopIteration:  # leading whitespace or no value: the full parser says which
            value, end = _decoder.decode(text), len(text)
        if end != len(text):  # trailing whitespace or extra data
            value = _decoder.decode(text)
        if _SURROGATE.search(text):  # an escaped surrogate: paired, or refused
            _check_paired(value, what)
        return value
    except InvalidJSON:
        raise
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InvalidJSON(f"{what} is not valid JSON: {_reason(exc)}") from None


# `\ud800`-`\udfff` escapes; a pair decodes to one character, a lone one stays a surrogate
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_paired(value: Any, what: str) -> None:
    """Refuse a lone surrogate anywhere in `value` (I-JSON, RFC 7493 §2.1): it is no character,
    cannot be written as UTF-8, and failed later, in a reply, a log line or a file name."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidJSON(
            f"{what} is not valid JSON text: it holds a lone UTF-16 surrogate escape "
            "(\\ud800-\\udfff without its pair)"
        ) from None


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
