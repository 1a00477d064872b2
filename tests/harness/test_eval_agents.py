"""Agents by name (built-ins, entry points, MODULE:ATTR) and the random agent's arguments."""

from __future__ import annotations

import random
from typing import Any

import pytest
from eval_helpers import Bisect

import mcpgym.harness.agents as agents_module
from mcpgym import MCPEnvironment, tool
from mcpgym.harness.agents import (
    AgentOptions,
    RandomAgent,
    available_agents,
    load_agent,
    minimal_arguments,
    register_agent,
)
from mcpgym.harness.episodes import Agent, seeded_specs
from mcpgym.harness.eval.runner import evaluate
from mcpgym.harness.llm.agent import LLMAgent


class FakeEntryPoint:
    def __init__(self, name: str, value: Any) -> None:
        self.name, self.value = name, value

    def load(self) -> Any:
        return self.value


def test_builtins_load_with_options() -> None:
    random_agent = load_agent("random", AgentOptions(seed=4))
    assert isinstance(random_agent, RandomAgent) and random_agent.seed == 4
    llm = load_agent("llm", AgentOptions(model_url="http://127.0.0.1:1/v1", model="m", api_key="k"))
    assert isinstance(llm, LLMAgent) and llm.url == "http://127.0.0.1:1/v1/chat/completions"
    assert isinstance(llm, Agent) and isinstance(random_agent, Agent)


def test_entry_point_agents_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake(group: str) -> list[FakeEntryPoint]:
        assert group == "mcpgym.agents"
        return [FakeEntryPoint("oracle", lambda options: Bisect())]

    monkeypatch.setattr(agents_module, "entry_points", fake)
    assert "oracle" in available_agents()
    assert isinstance(load_agent("oracle"), Bisect)


def test_module_attr_accepts_classes_factories_and_instances(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(agents_module, "_REGISTRY", dict(agents_module._REGISTRY))
    assert isinstance(load_agent("eval_helpers:Bisect"), Bisect)  # optional parameter: no options
    assert isinstance(load_agent("eval_helpers:logging_bisect"), Bisect)
    register_agent("fixed", lambda options: RandomAgent(seed=options.seed + 1))
    assert load_agent("fixed", AgentOptions(seed=1)).seed == 2
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        load_agent("nope")
    with pytest.raises(ValueError, match="made list, which is not an Agent"):
        load_agent("eval_helpers:suite")
    with pytest.raises(ValueError, match="cannot make agent 'eval_helpers:secret'"):
        load_agent("eval_helpers:secret")


@pytest.mark.parametrize(
    ("schema", "check"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}}, lambda v: v == {}),
        (
            {"type": "object", "required": ["e"], "properties": {"e": {"enum": ["x", "y"]}}},
            lambda v: v["e"] in ("x", "y"),
        ),
        (
            {
                "type": "object",
                "required": ["n"],
                "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 5}},
            },
            lambda v: 3 <= v["n"] <= 5,
        ),
        (
            {
                "type": "object",
                "required": ["s", "l", "b"],
                "properties": {
                    "s": {"type": "string", "minLength": 2},
                    "l": {"type": "array", "minItems": 1, "items": {"type": "boolean"}},
                    "b": {"anyOf": [{"type": "null"}, {"type": "number", "minimum": 1}]},
                },
            },
            lambda v: len(v["s"]) == 2 and len(v["l"]) == 1 and v["b"] >= 1,
        ),
        (
            {
                "type": "object",
                "required": ["p"],
                "properties": {"p": {"$ref": "#/$defs/P"}},
                "$defs": {
                    "P": {"type": "object", "required": ["k"], "properties": {"k": {"const": 7}}}
                },
            },
            lambda v: v == {"p": {"k": 7}},
        ),
        (
            {"type": "object", "required": ["d"], "properties": {"d": {"default": 3}}},
            lambda v: v == {"d": 3},
        ),
    ],
)
def test_minimal_arguments_satisfy_the_schema(schema: dict[str, Any], check: Any) -> None:
    assert check(minimal_arguments(schema, random.Random(1)))


class Shapes(MCPEnvironment):
    """Tools with assorted argument types; every call must validate."""

    blocking = False

    @tool
    def area(self, kind: str, sides: list[float], scale: int = 1) -> float:
        """Area of a shape."""
        return 0.0

    @tool
    def flag(self, on: bool, level: int | None = None) -> bool:
        """Set a flag."""
        return on


async def test_random_agent_calls_always_validate() -> None:
    result = await evaluate(Shapes, RandomAgent(seed=2), seeded_specs(5, max_steps=10))
    records = result.records
    assert all(r.tool_calls == 10 for r in records)
    assert all(r.tool_errors == {} for r in records), [r.tool_errors for r in records]
    assert {c.tool for r in records for c in r.calls} == {"area", "flag"}
