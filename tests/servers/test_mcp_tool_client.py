"""`MCPToolClient`: production goes to `/mcp` through the official `mcp` Client, simulation goes
through WebSocket `step`, and the server counts which transport really carried the calls (the
incumbent's production mode silently used the WebSocket)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from helpers.server import RunningServer, run_server
from mcpgym.errors import RemoteError
from mcpgym.examples.guess import GuessEnv
from mcpgym.mcp_client import MCPToolClient, SyncMCPToolClient
from mcpgym.servers import create_app
from mcpgym.tools import Mode

pytestmark = pytest.mark.server

TOKEN = "client-token"


@dataclass
class Traffic:
    """What reached the server, by transport."""

    mcp_posts: int = 0
    ws_connections: int = 0
    ws_frames: int = 0
    paths: list[str] = field(default_factory=list)

    def reset(self) -> None:
        self.mcp_posts = self.ws_connections = self.ws_frames = 0
        self.paths.clear()


class Counting:
    """ASGI middleware counting `/mcp` POSTs and WebSocket frames."""

    def __init__(self, app: ASGIApp, traffic: Traffic) -> None:
        self.app, self.traffic = app, traffic

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        traffic = self.traffic
        if scope["type"] == "http":
            traffic.paths.append(scope["path"])
            if scope["path"] == "/mcp" and scope["method"] == "POST":
                traffic.mcp_posts += 1
        elif scope["type"] == "websocket":
            traffic.ws_connections += 1

            async def counted() -> Message:
                message = await receive()
                if message["type"] == "websocket.receive":
                    traffic.ws_frames += 1
                return message

            await self.app(scope, counted, send)
            return
        await self.app(scope, receive, send)


@dataclass
class Served:
    server: RunningServer
    traffic: Traffic


@pytest.fixture(scope="module", params=["production", "simulation"])
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    """GuessEnv in either mode with a token; production also serves /ws, so a client that
    wrongly took the WebSocket would still work and only the counters would tell."""
    traffic = Traffic()
    mode: Mode = request.param
    app = create_app(GuessEnv, mode=mode, token=TOKEN, production_ws=mode == "production")
    with run_server(Counting(app, traffic)) as server:
        yield Served(server, traffic)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_async_client_uses_its_modes_transport(served: Served, protocol: Any) -> None:
    mode: Mode = served.server.health()["mode"]
    served.traffic.reset()
    async with MCPToolClient(served.server.url, mode=mode, token=TOKEN, protocol=protocol) as tools:
        names = sorted(t.name for t in await tools.list_tools())
        ok = await tools.call_tool("guess", {"n": 50})
        bad = await tools.call_tool("guess", {"n": "fifty"})
        failing = await tools.call_tool("guess", {"n": 1000})
        hidden = await tools.call_tool("hint" if mode == "production" else "leaderboard")
        unknown = await tools.call_tool("no_such_tool", {})
    assert tools.transport == ("mcp" if mode == "production" else "websocket")

    assert names == (["guess", "leaderboard"] if mode == "production" else ["guess", "hint"])
    assert ok.error is None and ok.result["verdict"] in ("higher", "lower", "correct")
    assert bad.error is not None and bad.error.error_type == "invalid_args"
    assert failing.error is not None and failing.error.error_type == "execution_error"
    for missing in (hidden, unknown):
        assert missing.error is not None and missing.error.error_type == "tool_not_found"

    traffic = served.traffic
    if mode == "production":
        assert traffic.mcp_posts >= 6 and traffic.ws_connections == 0 and traffic.ws_frames == 0
    else:
        assert traffic.mcp_posts == 0 and traffic.ws_connections == 1
        assert traffic.ws_frames >= 7  # reset, list_tools and five steps (and close)


def test_sync_twin(served: Served) -> None:
    mode: Mode = served.server.health()["mode"]
    served.traffic.reset()
    with SyncMCPToolClient(served.server.url, mode, TOKEN) as tools:
        assert "guess" in [t.name for t in tools.list_tools()]
        assert tools.call_tool("guess", {"n": 50}).error is None
    if mode == "production":
        assert served.traffic.mcp_posts > 0 and served.traffic.ws_frames == 0
    else:
        assert served.traffic.mcp_posts == 0 and served.traffic.ws_frames > 0


async def test_a_wrong_token_is_refused(served: Served) -> None:
    mode: Mode = served.server.health()["mode"]
    with pytest.raises(RemoteError) as refused:
        async with MCPToolClient(served.server.url, mode=mode, token="wrong") as tools:
            await tools.list_tools()
    assert "HTTP 401" in str(refused.value) or "HTTP 403" in str(refused.value)


def test_mode_is_checked() -> None:
    with pytest.raises(ValueError, match="mode"):
        MCPToolClient("http://127.0.0.1:1", mode="training")  # type: ignore[arg-type]
