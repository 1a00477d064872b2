"""Hostile inputs for the hypothesis suites (tests/servers/test_hostile_*.py): JSON values,
poison tokens spliced into frames (NaN, 1e999, lone surrogates, huge numbers), deep nesting, and
the strict reply check (`strict`: RFC 8259 JSON, no NaN or Infinity)."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("MCPGYM_FUZZ_EXAMPLES", "60"))
"""Examples per property in the default run; the `fuzz` sweep (just test-fuzz) sets thousands."""

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
VALUES = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_poison = st.sampled_from(
    ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "9" * 5000, '"\\ud800"', "1.5e-400"]
)


def _splice(text: str, poison: str, where: int) -> str:
    """`text` with a poison token put in place of one of its values."""
    spots = [i for i, ch in enumerate(text) if ch in ",:[" and i + 1 < len(text)]
    if not spots:
        return poison
    i = spots[where % len(spots)] + 1
    return text[:i] + poison + ("," if text[i : i + 1] not in "]}," else "") + text[i:]


def _frame(kind: str, data: Any, extra: dict[str, Any]) -> str:
    return json.dumps({"type": kind, "data": data, **extra})


_frames = st.builds(
    _frame,
    st.sampled_from(["reset", "step", "state", "mcp", "nope", ""]),
    VALUES
    | st.fixed_dictionaries(
        {"type": st.sampled_from(["call_tool", "list_tools"]), "tool_name": st.text(max_size=8)},
        optional={"arguments": VALUES},
    ),
    st.dictionaries(st.sampled_from(["id", "timeout_s", "seed"]), VALUES, max_size=2),
)
_deep = st.integers(min_value=30, max_value=20_000).map(lambda n: "[" * n + "]" * n)
HOSTILE: st.SearchStrategy[str] = st.one_of(
    _frames,
    st.builds(_splice, _frames, _poison, st.integers(0, 50)),
    VALUES.map(json.dumps),
    _deep,
    _deep.map(lambda d: '{"type":"reset","data":{"seed":' + d + "}}"),
    st.text(max_size=200),
)


def strict(text: str | bytes) -> Any:
    """Parse as RFC 8259 JSON (fails on NaN/Infinity)."""

    def refuse(token: str) -> Any:
        raise AssertionError(f"reply is not strict JSON: contains {token}")

    return json.loads(text, parse_constant=refuse)
