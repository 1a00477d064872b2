"""Content values (`mcpgym.content`) and `ToolContext` (`mcpgym.context`): one tool, rendered as
MCP content blocks on MCP transports and as the same blocks in JSON by simulation `step`; the
context parameter is injected, never part of the schema, and degrades clearly where a transport
cannot carry what it asks for."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from helpers.ws import request
from mcpgym import CallToolAction, MCPEnvironment, tool
from mcpgym.content import Audio, ContentBlocks, Image, Resource, Text, as_blocks
from mcpgym.context import ToolContext, recording
from mcpgym.errors import EnvironmentDefinitionError
from mcpgym.examples.everything import EverythingEnv
from mcpgym.servers import create_app

LOCAL = "http://127.0.0.1:8000"


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(EverythingEnv), base_url=LOCAL) as test_client:
        yield test_client


def test_content_values_render_as_mcp_blocks() -> None:
    image = Image.from_bytes(b"\x89PNG", "image/png")
    assert image.to_block() == {
        "type": "image",
        "data": base64.b64encode(b"\x89PNG").decode(),
        "mimeType": "image/png",
    }
    assert Audio("AAAA", "audio/wav").to_block() == {
        "type": "audio",
        "data": "AAAA",
        "mimeType": "audio/wav",
    }
    assert Resource.from_bytes("test://b", b"\x00", "application/octet-stream").to_block() == {
        "type": "resource",
        "resource": {"uri": "test://b", "mimeType": "application/octet-stream", "blob": "AA=="},
    }
    assert as_blocks([Text("a"), Text("b")]) == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
    ]
    assert (
        as_blocks([Text("a"), "b"]) is None and as_blocks([]) is None and as_blocks("text") is None
    )
    with pytest.raises(ValueError, match="exactly one"):
        Resource("test://x")


def test_content_tools_have_no_output_schema() -> None:
    specs = EverythingEnv.tool_specs
    for name in ("test_simple_text", "test_image_content", "test_multiple_content_types"):
        assert specs[name].returns_content and specs[name].output_schema is None


def test_simulation_step_renders_the_same_blocks() -> None:
    env = EverythingEnv()
    env.reset()
    obs: Any = env.step(CallToolAction(tool_name="test_multiple_content_types"))
    assert obs.error is None
    assert [b["type"] for b in obs.result] == ["text", "image", "resource"]
    assert obs.result[2]["resource"] == {
        "uri": "test://mixed-content-resource",
        "mimeType": "application/json",
        "text": '{"test":"data","value":123}',
    }
    dumped = obs.model_dump(mode="json")
    assert dumped["result"] == list(obs.result)


def test_untyped_tool_returning_content_is_rendered_as_content() -> None:
    class Untyped(MCPEnvironment):
        @tool
        def picture(self):  # type: ignore[no-untyped-def]  # no annotation on purpose
            """A picture, decided at run time."""
            return Image("AAAA", "image/png")

    env = Untyped()
    env.reset()
    result = env.call_tool_sync("picture", {})
    assert isinstance(result, ContentBlocks) and result[0]["type"] == "image"


def test_ws_step_and_ws_mcp_frame_agree(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset", "data": {}})
        stepped = request(
            ws, {"type": "step", "data": {"type": "call_tool", "tool_name": "test_image_content"}}
        )
        blocks = stepped["data"]["observation"]["result"]
        frame = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "test_image_content"},
        }
        answered = request(ws, {"type": "mcp", "data": frame})["data"]["result"]
    assert answered["content"] == blocks
    assert "structuredContent" not in answered and answered["isError"] is False


def test_context_parameter_is_injected_and_not_in_the_schema() -> None:
    spec = EverythingEnv.tool_specs["test_sampling"]
    assert spec.context_param == "ctx"
    assert list(spec.input_schema["properties"]) == ["prompt"]
    assert "ctx" not in spec.input_schema.get("required", [])


def test_a_sync_tool_cannot_take_a_context() -> None:
    with pytest.raises(EnvironmentDefinitionError, match="async def"):

        class Bad(MCPEnvironment):
            @tool
            def sync_tool(self, ctx: ToolContext) -> str:
                """Not allowed."""
                return "x"


def test_simulation_records_logs_and_progress_and_refuses_sampling() -> None:
    env = EverythingEnv()
    env.reset()
    with recording() as ctx:
        obs: Any = env.step(CallToolAction(tool_name="test_tool_with_progress"))
    assert obs.error is None
    assert [e["progress"] for e in ctx.events] == [0, 50, 100]
    refused: Any = env.step(CallToolAction(tool_name="test_sampling", arguments={"prompt": "hi"}))
    assert refused.error.error_type == "execution_error"
    assert refused.error.feature == "sampling"
    assert "unavailable in simulation" in refused.error.message
    assert ToolContext().supports("elicitation") is False


def test_step_observation_carries_the_tool_events() -> None:
    env = EverythingEnv()
    env.reset()
    obs: Any = env.step(CallToolAction(tool_name="test_tool_with_logging"))
    logs = [e["data"] for e in obs.metadata["tool_events"] if e["event"] == "log"]
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]


def test_ws_mcp_frame_has_no_back_channel(client: TestClient) -> None:
    """The WebSocket mcp frame answers one request: logs are dropped, asking the client fails
    as data (the 2025-11-25 era it speaks has no server-to-client requests there)."""
    with client.websocket_connect("/ws") as ws:
        request(ws, {"type": "reset", "data": {}})
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        logged = request(
            ws, {"type": "mcp", "data": {**frame, "params": {"name": "test_tool_with_logging"}}}
        )
        assert logged["data"]["result"]["isError"] is False
        sampled = request(
            ws,
            {
                "type": "mcp",
                "data": {
                    **frame,
                    "params": {"name": "test_sampling", "arguments": {"prompt": "x"}},
                },
            },
        )
        result = sampled["data"]["result"]
        assert result["isError"] is True and result["structuredContent"]["feature"] == "sampling"
