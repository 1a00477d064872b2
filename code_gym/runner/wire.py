"""Plain values as tagged JSON, so a graded answer can only ever be data.

The grading driver (inside the sandbox) encodes what the submission returned; the host decodes it
into builtin values only (None, bool, int, float, str, bytes, list, tuple, dict, set, frozenset),
so no answer can carry an object with its own `__eq__`. `decode` refuses deep or huge trees.

Example:
    >>> decode(encode({"a": (1, 2.5), "b": {3}}))
    {'a': (1, 2.5), 'b': {3}}
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["WireError", "decode", "encode"]

MAX_DEPTH = 64
MAX_NODES = 200_000


class WireError(ValueError):
    """A value that cannot be encoded, or an encoding that is not a plain value."""


def encode(value: Any, depth: int = 0) -> Any:
    """`value` as JSON data with a one-letter tag per node (see the module docstring)."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return ["v", value]
    if kind is int:
        return ["i", str(value)]  # JSON numbers lose big integers
    if kind is float:
        return ["f", repr(value) if not math.isfinite(value) else value]
    if kind is bytes:
        return ["b", value.hex()]
    if kind in (list, tuple, set, frozenset):
        tag = {list: "l", tuple: "t", set: "s", frozenset: "z"}[kind]
        return [tag, [encode(v, depth + 1) for v in value]]
    if kind is dict:
        return ["d", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
    raise WireError(f"cannot send a {kind.__name__} (only plain builtin values)")


def decode(data: Any) -> Any:
    """The builtin value `data` encodes; `WireError` for anything else."""
    budget = [MAX_NODES]
    return _decode(data, 0, budget)


def _decode(data: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        raise WireError("value too deep or too large")
    if not (isinstance(data, list) and len(data) == 2 and isinstance(data[0], str)):
        raise WireError("not a tagged value")
    tag, body = data
    if tag == "v" and (body is None or isinstance(body, (bool, str))):
        return body
    if tag == "i" and isinstance(body, str) and len(body) <= 4000:
        try:
            return int(body)
        except ValueError:
            raise WireError("bad integer") from None
    if tag == "f":
        if isinstance(body, str) and body in ("inf", "-inf", "nan"):
            return float(body)
        if isinstance(body, (int, float)) and not isinstance(body, bool):
            return float(body)
    if tag == "b" and isinstance(body, str):
        try:
            return bytes.fromhex(body)
        except ValueError:
            raise WireError("bad bytes") from None
    if tag in ("l", "t", "s", "z") and isinstance(body, list):
        items = [_decode(v, depth + 1, budget) for v in body]
        try:
            return {"l": list, "t": tuple, "s": set, "z": frozenset}[tag](items)
        except TypeError:
            raise WireError("unhashable set member") from None
    if tag == "d" and isinstance(body, list):
        out: dict[Any, Any] = {}
        for pair in body:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise WireError("bad dict item")
            key = _decode(pair[0], depth + 1, budget)
            try:
                out[key] = _decode(pair[1], depth + 1, budget)
            except TypeError:
                raise WireError("unhashable dict key") from None
        return out
    raise WireError(f"bad tagged value {tag!r}")
