"""mcpgym's three clients against a real OpenEnv 0.10.0 server (tests/interop/openenv_server.py,
run by the openenv virtual environment's Python with OpenEnv's own `create_app`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.compat import OPENENV_SERVER, compat
from helpers.openenv import openenv_server
from mcpgym.client import EnvClient, GenericEnvClient, SyncEnvClient
from mcpgym.errors import ClientError, RemoteError
from mcpgym.mcp_client import MCPToolClient, SyncMCPToolClient

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

TOOLS = ["add", "echo", "fail"]


@pytest.fixture(scope="module", params=["simulation", "production"])
def server(request: pytest.FixtureRequest, openenv_python: Path) -> Iterator[tuple[str, str]]:
    """(URL, mode) of an OpenEnv server; one process per mode for the whole module."""
    with openenv_server(openenv_python, request.param) as url:
        yield url, request.param


@compat(
    OPENENV_SERVER,
    "mcpgym SyncEnvClient",
    "works",
    "plays an episode on OpenEnv's own create_app server",
)
def test_sync_env_client_plays_an_episode(server: tuple[str, str]) -> None:
    url, _ = server
    with SyncEnvClient(url) as env:
        first = env.reset(seed=1, episode_id="rev-1")
        assert first.done is False and first.observation.metadata == {"ready": True}
        assert env._core.echoes_ids is False  # learnt from the refused first frame
        assert sorted(t.name for t in env.list_tools()) == TOOLS
        assert env.call_tool("add", a=2, b=3).result == 5  # FastMCP's `data`, unwrapped
        assert env.call_tool("echo", message="hé").result == "hé"
        failed = env.call_tool("fail")
        assert failed.error is not None and failed.error.error_type == "execution_error"
        assert "always fails" in failed.error.message
        missing = env.call_tool("no_such_tool")
        assert missing.error is not None and missing.error.error_type == "tool_not_found"
        assert env.state().episode_id == "rev-1"


def test_a_bad_action_is_a_remote_error_not_a_resend_loop(server: tuple[str, str]) -> None:
    url, _ = server
    with SyncEnvClient(url) as env:
        env.reset()
        with pytest.raises(RemoteError) as caught:
            env.step({"type": "jump"})
        assert caught.value.remote_code == "VALIDATION_ERROR"
        assert env.call_tool("add", a=1, b=1).result == 2  # the session is still usable


@compat(
    OPENENV_SERVER,
    "mcpgym EnvClient, GenericEnvClient",
    "works",
    "the async and generic clients play the same server",
)
def test_async_and_generic_clients(server: tuple[str, str]) -> None:
    url, _ = server

    async def main() -> None:
        async with EnvClient(url) as env:
            await env.reset(seed=2)
            assert (await env.call_tool("add", a=20, b=22)).result == 42
            assert (await env.state()).step_count >= 0
        async with GenericEnvClient(url) as generic:
            await generic.reset()
            step = await generic.step(
                {"type": "call_tool", "tool_name": "echo", "arguments": {"message": "x"}}
            )
            assert step.observation["tool_name"] == "echo"
            assert step.observation["result"]["data"] == "x"  # dicts as the server sent them
            tools = await generic.list_tools()
            assert sorted(t["name"] for t in tools) == TOOLS

    asyncio.run(main())


@compat(
    OPENENV_SERVER,
    "mcpgym MCPToolClient",
    "works",
    "lists and calls an OpenEnv MCP environment's tools, unknown tools as tool_not_found",
)
@pytest.mark.parametrize("client_mode", ["production", "simulation"])
def test_mcp_tool_client(server: tuple[str, str], client_mode: str) -> None:
    """Production falls back to OpenEnv's /mcp dialect; simulation plays over /ws."""
    url, _ = server
    with SyncMCPToolClient(url, mode=client_mode) as tools:  # type: ignore[arg-type]
        assert sorted(t.name for t in tools.list_tools()) == TOOLS
        assert tools.call_tool("add", {"a": 4, "b": 5}).result == 9
        failed = tools.call_tool("fail")
        assert failed.error is not None and "always fails" in failed.error.message
        missing = tools.call_tool("no_such_tool")
        assert missing.error is not None and missing.error.error_type == "tool_not_found"


def test_mcp_tool_client_on_a_path_that_speaks_nothing(server: tuple[str, str]) -> None:
    """No MCP and no OpenEnv dialect: one documented `ClientError`, never an ExceptionGroup."""
    url, _ = server

    async def main() -> None:
        with pytest.raises(ClientError) as caught:
            async with MCPToolClient(f"{url}/nowhere", mode="production", timeout=10):
                pass
        assert type(caught.value) is not BaseExceptionGroup
        assert "nowhere/mcp" in str(caught.value)

    asyncio.run(main())
