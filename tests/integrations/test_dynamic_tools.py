"""Dynamic tools (mcpgym.dynamic_tools) behave as `@tool` tools do: validation, modes, errors.

The same two-tool environment is written both ways; every hostile argument set must be refused
by both with the same error type and the same offending fields, in process and over a real
server's `/mcp` with the official MCP client.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from helpers.mcp import http_client
from helpers.server import run_server
from mcpgym import MCPEnvironment, tool
from mcpgym.dynamic_tools import DynamicTool, DynamicToolsEnvironment
from mcpgym.errors import (
    EnvironmentDefinitionError,
    InvalidToolArguments,
    ToolExecutionError,
    ToolNotFound,
)
from mcpgym.servers import create_app


class Typed(MCPEnvironment):
    @tool
    def add(self, a: int, b: int = 1) -> dict[str, int]:
        """Add."""
        return {"sum": a + b}

    @tool(mode="simulation")
    def peek(self) -> dict[str, str]:
        """Trainer only."""
        return {"secret": "s"}


ADD = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 1}},
    "required": ["a"],
    "additionalProperties": False,
}


class Dyn(DynamicToolsEnvironment):
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        obs = super().reset(seed=seed, episode_id=episode_id, **kw)
        out = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
        self.publish_tools(
            [
                DynamicTool("add", ADD, description="Add.", output_schema=out),
                DynamicTool("peek", description="Trainer only.", mode="simulation"),
                DynamicTool("boom"),
                DynamicTool("liar", output_schema=out),
            ]
        )
        return obs

    async def dispatch_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        if name == "add":
            return {"sum": arguments["a"] + arguments.get("b", 1)}
        if name == "peek":
            return {"secret": "s"}
        if name == "boom":
            raise RuntimeError("the foreign environment fell over")
        return {"sum": "not a number"}


HOSTILE: list[dict[str, Any]] = [
    {},
    {"b": 2},
    {"a": "x"},
    {"a": None},
    {"a": 1.5},
    {"a": [1]},
    {"a": {"n": 1}},
    {"a": 1, "c": 2},
    {"a": 1, "b": "two", "zz": 0},
]


def _fields(err: InvalidToolArguments) -> set[str]:
    return {e["field"] for e in err.detail["errors"]}


@pytest.mark.parametrize("args", HOSTILE, ids=[str(a) for a in HOSTILE])
def test_hostile_arguments_are_refused_alike(args: dict[str, Any]) -> None:
    refused: list[InvalidToolArguments] = []
    for env in (Typed(), Dyn()):
        env.reset()
        with pytest.raises(InvalidToolArguments) as info:
            asyncio.run(env.call_tool("add", args))
        refused.append(info.value)
    typed, dyn = refused
    assert _fields(dyn) == _fields(typed), (typed.detail["errors"], dyn.detail["errors"])
    assert dyn.to_info()["error_type"] == typed.to_info()["error_type"] == "invalid_args"
    assert dyn.detail["input_schema"]["required"] == ["a"]


def test_calls_modes_and_failures_in_process() -> None:
    env = Dyn()
    env.reset()
    assert asyncio.run(env.call_tool("add", {"a": 2, "b": 3})) == {"sum": 5}
    assert env.call_tool_sync("add", {"a": 2}) == {"sum": 3}
    with pytest.raises(ToolExecutionError, match="fell over"):
        asyncio.run(env.call_tool("boom", {}))
    with pytest.raises(ToolExecutionError, match="outside its output schema"):
        asyncio.run(env.call_tool("liar", {}))
    with pytest.raises(ToolNotFound, match="did you mean add"):
        asyncio.run(env.call_tool("ad", {}))
    prod = Dyn()
    prod.serving_mode = "production"
    prod.reset()
    assert "peek" not in [s.name for s in prod.visible_tools()]
    with pytest.raises(ToolNotFound):
        asyncio.run(prod.call_tool("peek", {}))
    assert "peek" not in prod.metadata().tools


@pytest.mark.parametrize(
    "make",
    [
        lambda: DynamicTool("reset"),
        lambda: DynamicTool("has space"),
        lambda: DynamicTool(""),
        lambda: DynamicTool("x" * 129),
        lambda: DynamicTool("t", {"type": "array"}),
        lambda: DynamicTool("t", {"type": "object", "properties": 3}),
        lambda: DynamicTool("t", output_schema={"type": "string"}),
        lambda: DynamicTool("t", mode="staging"),  # type: ignore[arg-type]
        lambda: DynamicTool(5),  # type: ignore[arg-type]
        lambda: DynamicTool("t", "not a schema"),  # type: ignore[arg-type]
        lambda: DynamicTool("t", {"type": "object", "required": "a"}),
    ],
)
def test_bad_definitions_fail_at_definition(make: Any) -> None:
    with pytest.raises(EnvironmentDefinitionError):
        make()


def test_names_cannot_collide() -> None:
    class Both(DynamicToolsEnvironment):
        @tool
        def fixed(self) -> str:
            """A @tool."""
            return "x"

    env = Both()
    with pytest.raises(EnvironmentDefinitionError, match="twice"):
        env.publish_tools([DynamicTool("fixed")])
    with pytest.raises(EnvironmentDefinitionError, match="twice"):
        env.publish_tools([DynamicTool("a"), DynamicTool("a")])


@pytest.mark.server
@pytest.mark.parametrize("mode", ["simulation", "production"])
async def test_over_mcp_like_tool_tools(mode: str) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for cls in (Typed, Dyn):
        with run_server(create_app(cls, mode=mode)) as running:
            async with http_client(f"{running.url}/mcp", "legacy") as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
                ok = await client.call_tool("add", {"a": 40, "b": 2})
                bad = await client.call_tool("add", {"a": "x", "c": 1})
                # the error is JSON text (the output schema keeps it out of structuredContent)
                error = json.loads(bad.content[0].text)  # type: ignore[union-attr]
                hidden: Any = None
                try:
                    hidden = await client.call_tool("peek", {})
                except MCPError as err:
                    hidden = err.error.code
                seen[cls.__name__] = {
                    "has_peek": "peek" in listed,
                    "add_schema": listed["add"].input_schema.get("required"),
                    "ok": ok.structured_content,
                    "bad": (bad.is_error, error["error_type"]),
                    "bad_fields": sorted(e["field"] for e in error["errors"]),
                    "hidden": hidden if isinstance(hidden, int) else hidden.is_error,
                }
    assert seen["Dyn"] == seen["Typed"]
    assert seen["Dyn"]["ok"] == {"sum": 42}
    assert seen["Dyn"]["bad"] == (True, "invalid_args")
    assert seen["Dyn"]["has_peek"] is (mode == "simulation")
    assert seen["Dyn"]["hidden"] == (False if mode == "simulation" else -32602)
