"""The official `mcp` Client, in `legacy` (2025-11-25 handshake) and `auto` (2026-07-28) modes,
against real servers: uvicorn on 127.0.0.1 over Streamable HTTP, and `mcpgym serve --stdio`
subprocesses. Lists, calls, error results, unknown tools, and the `ToolContext` features (logs,
progress, sampling, elicitation) end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client  # mcp 2.0's Client takes a transport, not params
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from helpers.mcp import LEGACY, MODERN, ClientMode, http_client, sse_responses, stdio_params
from helpers.server import RunningServer, run_server
from mcpgym.examples.everything import EverythingEnv
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

MODES: list[ClientMode] = ["legacy", "auto"]
ERA = {"legacy": LEGACY, "auto": MODERN}
GUESS = "mcpgym.examples.guess:GuessEnv"
EVERYTHING = "mcpgym.examples.everything:EverythingEnv"


@pytest.fixture(scope="module")
def production() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv, mode="production")) as running:
        yield running


@pytest.fixture(scope="module")
def everything() -> Iterator[RunningServer]:
    app = create_app(EverythingEnv, mode="production")
    if not sse_responses(app):
        pytest.skip(
            "/mcp answers with JSON bodies, which have no back channel: servers/app.py must build "
            "the session manager with routes_mcp.build_session_manager (SSE for ToolContext tools)"
        )
    with run_server(app) as running:
        yield running


def error_payload(result: types.CallToolResult) -> dict[str, Any]:
    """The `{"error_type", "message", ...}` an mcpgym error result carries as JSON text."""
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return json.loads(text.text)


async def check_guess_tools(client: Client, mode: ClientMode) -> None:
    """The production GuessEnv contract, whatever the transport."""
    assert client.protocol_version == ERA[mode]
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(tools) == ["guess", "leaderboard"]
    assert tools["guess"].input_schema["required"] == ["n"]
    assert tools["guess"].output_schema is not None
    assert tools["leaderboard"].annotations is not None
    assert tools["leaderboard"].annotations.read_only_hint is True

    ok = await client.call_tool("guess", {"n": 50})
    assert ok.is_error is False
    assert ok.structured_content is not None
    assert ok.structured_content["verdict"] in ("higher", "lower", "correct")

    # guess has an output schema: its errors travel as JSON text only (see error_result)
    bad_args = await client.call_tool("guess", {"n": "fifty"})
    assert bad_args.is_error is True and bad_args.structured_content is None
    payload = error_payload(bad_args)
    assert payload["error_type"] == "invalid_args"
    assert payload["errors"][0]["field"] == "n"

    business = await client.call_tool("guess", {"n": 1000})
    assert business.is_error is True
    payload = error_payload(business)
    assert payload["error_type"] == "execution_error"
    assert "outside" in payload["message"]

    for hidden in ("hint", "no_such_tool"):
        with pytest.raises(MCPError) as err:
            await client.call_tool(hidden, {})
        assert err.value.code == types.INVALID_PARAMS


@pytest.mark.parametrize("mode", MODES)
async def test_http(production: RunningServer, mode: ClientMode) -> None:
    async with http_client(f"{production.url}/mcp", mode) as client:
        await check_guess_tools(client, mode)


@pytest.mark.parametrize("mode", MODES)
async def test_stdio(mode: ClientMode) -> None:
    async with Client(
        stdio_client(stdio_params(GUESS)), mode=mode, read_timeout_seconds=30.0
    ) as client:
        await check_guess_tools(client, mode)


class Recorder:
    """Client-side callbacks that answer the server's questions and keep what arrived."""

    def __init__(self) -> None:
        self.logs: list[str] = []
        self.progress: list[float] = []
        self.sampled: list[str] = []
        self.elicited: list[str] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(str(params.data))

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(progress)

    async def on_sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        self.sampled.append(content.text if isinstance(content, types.TextContent) else "?")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="test-model",
        )

    async def on_elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.elicited.append(params.message)
        return types.ElicitResult(
            action="accept", content={"username": "ada", "email": "ada@example.com"}
        )

    def options(self) -> dict[str, Any]:
        return {
            "logging_callback": self.on_log,
            "sampling_callback": self.on_sample,
            "elicitation_callback": self.on_elicit,
            "log_level": "debug",
        }


async def check_context(client: Client, seen: Recorder) -> None:
    """ToolContext over MCP: logs, progress, sampling and elicitation reach the client."""
    if client.protocol_version == LEGACY:
        with pytest.warns(MCPDeprecationWarning):  # logging/setLevel is gone in 2026-07-28
            await client.set_logging_level("info")
    logged = await client.call_tool("test_tool_with_logging", {})
    assert logged.is_error is False
    assert seen.logs == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]

    await client.call_tool("test_tool_with_progress", {}, progress_callback=seen.on_progress)
    assert seen.progress == [0, 50, 100]

    sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
    assert sampled.is_error is False, sampled
    assert seen.sampled == ["Capital of France?"]
    reply = sampled.content[0]
    assert isinstance(reply, types.TextContent) and reply.text == "LLM response: Paris"

    elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    assert seen.elicited == ["Who are you?"]
    answer = elicited.content[0]
    assert (
        isinstance(answer, types.TextContent)
        and "action=accept" in answer.text
        and "ada" in answer.text
    )

    image = await client.call_tool("test_image_content", {})
    assert isinstance(image.content[0], types.ImageContent) and image.structured_content is None


@pytest.mark.parametrize("mode", MODES)
async def test_tool_context_over_stdio(mode: ClientMode) -> None:
    seen = Recorder()
    async with Client(
        stdio_client(stdio_params(EVERYTHING)),
        mode=mode,
        read_timeout_seconds=30.0,
        **seen.options(),
    ) as client:
        await check_context(client, seen)


@pytest.mark.parametrize("mode", MODES)
async def test_tool_context_over_http(everything: RunningServer, mode: ClientMode) -> None:
    seen = Recorder()
    async with http_client(f"{everything.url}/mcp", mode, **seen.options()) as client:
        await check_context(client, seen)


async def test_missing_capability_is_an_error_result_on_2025(everything: RunningServer) -> None:
    async with http_client(f"{everything.url}/mcp", "legacy") as client:  # no sampling callback
        result = await client.call_tool("test_sampling", {"prompt": "hi"})
    assert result.is_error is True
    assert result.structured_content is not None
    assert result.structured_content["feature"] == "sampling"


async def test_missing_capability_is_32021_on_2026(everything: RunningServer) -> None:
    async with http_client(f"{everything.url}/mcp", "auto") as client:
        with pytest.raises(MCPError) as err:
            await client.call_tool("test_sampling", {"prompt": "hi"})
    assert err.value.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
