"""servers/wire_json.py reads and writes exactly what the standard library's strict JSON does.

`loads` calls the decoder's C scanner directly when a text is one value with nothing around it,
and `dumps` calls a C encoder built once; both must agree with `json` configured strictly (no
NaN or infinities, compact separators, ASCII output) on every value and every text, valid or
not, and a value that contains itself must stay a `ValueError`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgym.errors import InvalidJSON
from mcpgym.servers import wire_json


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


STRICT_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)
STRICT_ENCODE = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=25
)
JSON_ISH = st.text(alphabet=' \t\r\n{}[]":,0123456789.eE+-truefalsnNaIiy\\u', max_size=60)


def outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(arg)
    except Exception as exc:
        return "error", type(exc).__name__


def strict_loads(text: str) -> Any:
    try:
        return STRICT_DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidJSON(str(exc)) from None


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_dumps_writes_what_strict_json_writes(value: Any) -> None:
    assert outcome(wire_json.dumps, value) == outcome(STRICT_ENCODE, value)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        VALUES.map(json.dumps),  # valid, some with NaN/Infinity from floats
        VALUES.map(lambda v: f" {json.dumps(v)}\n"),  # whitespace around the value
        VALUES.map(lambda v: f"{json.dumps(v)} x"),  # extra data
        JSON_ISH,  # mostly broken
    )
)
def test_loads_reads_what_strict_json_reads(text: str) -> None:
    ours, theirs = outcome(wire_json.loads, text), outcome(strict_loads, text)
    assert ours[0] == theirs[0], (text, ours, theirs)
    if ours[0] == "ok":  # NaN-free by construction, so values compare through their JSON
        assert json.dumps(ours[1]) == json.dumps(theirs[1])
    else:
        assert ours[1] == "InvalidJSON"


def test_a_value_that_contains_itself_is_a_value_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    mapping: dict[str, Any] = {}
    mapping["self"] = mapping
    for value in (loop, mapping, {"a": [mapping]}):
        with pytest.raises(ValueError):
            wire_json.dumps(value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {"r": -math.inf}, object(), {1j: 1}])
def test_what_json_cannot_carry_is_refused(value: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        wire_json.dumps(value)


def test_a_lone_surrogate_is_escaped_not_unencodable() -> None:
    text = wire_json.dumps({"s": "\ud800"})
    assert text == '{"s":"\\ud800"}' and text.isascii()
