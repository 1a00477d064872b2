"""The grader's value encoding: plain builtin values only, bounded."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from code_gym.runner.wire import WireError, decode, encode

plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(plain)
def test_round_trip_keeps_value_and_types(value: object) -> None:
    back = decode(encode(value))
    assert back == value
    assert type(back) is type(value)


def test_special_floats_and_big_ints() -> None:
    assert math.isnan(decode(encode(float("nan"))))
    assert decode(encode(float("-inf"))) == float("-inf")
    assert decode(encode(10**300)) == 10**300
    assert decode(encode({frozenset({1}), 2})) == {frozenset({1}), 2}


class Liar:
    def __eq__(self, other: object) -> bool:
        return True


@pytest.mark.parametrize("value", [Liar(), [Liar()], {"a": object()}, True.__class__, print])
def test_non_plain_values_are_refused(value: object) -> None:
    with pytest.raises(WireError):
        encode(value)


class SubInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


def test_a_subclass_of_a_builtin_is_refused() -> None:
    with pytest.raises(WireError):
        encode(SubInt(3))


@pytest.mark.parametrize(
    "data",
    [
        ["x", 1],
        ["i", 3],
        ["i", "1" * 5000],
        ["f", "1e5"],
        ["v", [1]],
        ["d", [[["l", []], ["v", None]]]],  # an unhashable key
        ["s", [["l", []]]],
        "nope",
        None,
    ],
)
def test_forged_encodings_are_refused(data: object) -> None:
    with pytest.raises(WireError):
        decode(data)


def test_deep_and_huge_trees_are_refused() -> None:
    deep: list[object] = ["v", None]
    for _ in range(200):
        deep = ["l", [deep]]
    with pytest.raises(WireError):
        decode(deep)
    wide = ["l", [["v", None]] * 300_000]
    with pytest.raises(WireError):
        decode(wide)
