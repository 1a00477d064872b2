"""A tool's mode tag is honoured identically on every transport (DESIGN.md §3).

For GuessEnv: `guess` is untagged, `hint` is simulation-only, `leaderboard` production-only. For
each transport x mode the visible tools are exactly the expected set, and calling a hidden tool
fails as an unknown tool (JSON-RPC -32602 on MCP, `tool_not_found` on `step`).

Transports: `/mcp` (Streamable HTTP), the WebSocket `{"type": "mcp"}` frame, `step` over `/ws`
(production needs `production_ws` and a token), and stdio. stdio is the production face only
(`mcpgym serve --stdio` serves production tools; simulation episodes go over `/ws`), so the
stdio x simulation cell does not exist and is not parametrized.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketTestSession

from helpers.mcp import StdioProcess, open_session, rpc, rpc_result
from helpers.ws import request
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app
from mcpgym.tools import Mode

LOCAL = "http://127.0.0.1:8000"  # the Host the DNS-rebinding guard accepts
TOKEN = "matrix-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
VISIBLE: dict[Mode, list[str]] = {
    "simulation": ["guess", "hint"],
    "production": ["guess", "leaderboard"],
}
HIDDEN: dict[Mode, str] = {"simulation": "leaderboard", "production": "hint"}
MODES: list[Mode] = ["simulation", "production"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> Mode:
    return request.param


@pytest.fixture
def client(mode: Mode) -> Iterator[TestClient]:
    """GuessEnv in `mode`, with a token so that production also serves `/ws`."""
    app = create_app(GuessEnv, mode=mode, token=TOKEN, production_ws=mode == "production")
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as test_client:
        yield test_client


def test_http_mcp(client: TestClient, mode: Mode) -> None:
    sid = open_session(client, "/mcp", **AUTH)
    listed = rpc_result(rpc(client, "/mcp", sid, "tools/list", {}, 2, **AUTH))
    assert sorted(t["name"] for t in listed["result"]["tools"]) == VISIBLE[mode]
    for name in VISIBLE[mode]:
        called = rpc_result(rpc(client, "/mcp", sid, "tools/call", call(name), 3, **AUTH))
        assert "result" in called, called
    hidden = rpc_result(rpc(client, "/mcp", sid, "tools/call", call(HIDDEN[mode]), 4, **AUTH))
    assert hidden["error"]["code"] == -32602
    assert HIDDEN[mode] in hidden["error"]["message"]


def test_ws_mcp_frame(client: TestClient, mode: Mode) -> None:
    with client.websocket_connect("/ws", headers=AUTH) as ws:
        assert request(ws, {"type": "reset", "data": {"seed": 1}})["type"] == "observation"
        listed = mcp_frame(ws, "tools/list", {})
        assert sorted(t["name"] for t in listed["result"]["tools"]) == VISIBLE[mode]
        for name in VISIBLE[mode]:
            assert "result" in mcp_frame(ws, "tools/call", call(name))
        hidden = mcp_frame(ws, "tools/call", call(HIDDEN[mode]))
        assert hidden["error"]["code"] == -32602


def test_ws_step(client: TestClient, mode: Mode) -> None:
    with client.websocket_connect("/ws", headers=AUTH) as ws:
        request(ws, {"type": "reset", "data": {"seed": 1}})
        listed = request(ws, {"type": "step", "data": {"type": "list_tools"}})
        tools = listed["data"]["observation"]["tools"]
        assert sorted(t["name"] for t in tools) == VISIBLE[mode]
        for name in VISIBLE[mode]:
            observation = step(ws, name)
            assert observation["error"] is None, observation
        hidden = step(ws, HIDDEN[mode])
        assert hidden["error"]["error_type"] == "tool_not_found"


def test_stdio_production() -> None:
    proc = StdioProcess("mcpgym.examples.guess:GuessEnv")
    try:
        proc.initialize()
        listed = proc.request("tools/list", {}, 2)
        assert sorted(t["name"] for t in listed["result"]["tools"]) == VISIBLE["production"]
        for i, name in enumerate(VISIBLE["production"]):
            assert "result" in proc.request("tools/call", call(name), 3 + i)
        hidden = proc.request("tools/call", call(HIDDEN["production"]), 9)
        assert hidden["error"]["code"] == -32602
    finally:
        proc.kill()


def call(name: str) -> dict[str, Any]:
    """tools/call params that succeed for every GuessEnv tool."""
    return {"name": name, "arguments": {"n": 50} if name == "guess" else {}}


def mcp_frame(ws: WebSocketTestSession, method: str, params: Any) -> dict[str, Any]:
    frame = {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}}
    reply = request(ws, frame)
    assert reply["type"] == "mcp", reply
    return reply["data"]


def step(ws: WebSocketTestSession, name: str) -> dict[str, Any]:
    action = {"type": "call_tool", "tool_name": name, **{"arguments": call(name)["arguments"]}}
    reply = request(ws, {"type": "step", "data": action})
    assert reply["type"] == "observation", reply
    return reply["data"]["observation"]
