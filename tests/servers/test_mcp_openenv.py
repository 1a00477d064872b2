"""OpenEnv 0.10.0's `/mcp` dialect beside spec MCP (servers/openenv/dialect.py), in-process.

The released client itself is exercised by the interop suite; these tests pin the wire rules for
every hostile input of each kind, both modes, auth, capacity and idle reaping.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from helpers.apps import ClientFactory
from helpers.wait import wait_until
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

SPEC_ACCEPT = {"accept": "application/json, text/event-stream"}


@pytest.fixture
def make_client() -> Iterator[ClientFactory]:
    """As tests/conftest.py's, on a loopback base URL: `/mcp` guards against DNS rebinding."""
    with contextlib.ExitStack() as stack:

        def make(env: Any = GuessEnv, **settings: Any) -> TestClient:
            client = TestClient(
                create_app(env, **settings),
                base_url="http://127.0.0.1:8000",
                raise_server_exceptions=False,
            )
            return stack.enter_context(client)

        yield make


@pytest.fixture
def guess_client(make_client: ClientFactory) -> TestClient:
    return make_client(GuessEnv)


def rpc(client: TestClient, method: str, params: Any = None, **headers: str) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        body["params"] = params
    response = client.post("/mcp", json=body, headers=headers)
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["jsonrpc"] == "2.0" and reply["id"] == 7
    return reply


def create(client: TestClient, **headers: str) -> str:
    sid = rpc(client, "openenv/session/create", {}, **headers)["result"]["session_id"]
    assert isinstance(sid, str) and len(sid) >= 20  # a capability, not a counter
    return sid


@pytest.mark.parametrize("mode", ["simulation", "production"])
def test_session_lifecycle_and_mode_tags(make_client: ClientFactory, mode: str) -> None:
    client = make_client(GuessEnv, mode=mode)
    sid = create(client)
    tools = rpc(client, "tools/list", {"session_id": sid})["result"]["tools"]
    visible = {"simulation": ["guess", "hint"], "production": ["guess", "leaderboard"]}[mode]
    assert sorted(t["name"] for t in tools) == visible
    assert all("inputSchema" in t for t in tools)
    call = rpc(client, "tools/call", {"session_id": sid, "name": "guess", "arguments": {"n": 5}})
    assert call["result"]["data"]["guesses"] == 1  # FastMCP's `data`: what OpenEnv returns
    assert call["result"]["isError"] is False and call["result"]["structuredContent"]
    again = rpc(client, "tools/call", {"session_id": sid, "name": "guess", "arguments": {"n": 6}})
    assert again["result"]["data"]["guesses"] == 2  # the same instance across requests
    hidden = "leaderboard" if mode == "simulation" else "hint"
    unknown = rpc(client, "tools/call", {"session_id": sid, "name": hidden, "arguments": {}})
    assert unknown["error"]["code"] == -32602
    closed = rpc(client, "openenv/session/close", {"session_id": sid})["result"]
    assert closed == {"session_id": sid, "closed": True}
    gone = rpc(client, "tools/list", {"session_id": sid})
    assert gone["error"]["code"] == -32000 and "Unknown session_id" in gone["error"]["message"]
    if mode == "simulation":
        assert client.get("/health").json()["sessions"] == 0


def test_tool_failures_are_openenv_errors_with_our_detail(guess_client: TestClient) -> None:
    sid = create(guess_client)
    for arguments, field in [({"n": "x"}, "n"), ({}, "n"), ({"n": 1, "zz": 0}, "zz")]:
        reply = rpc(
            guess_client, "tools/call", {"session_id": sid, "name": "guess", "arguments": arguments}
        )
        error = reply["error"]
        assert error["code"] == -32603 and f"({field})" in error["message"]
        assert error["data"]["error_type"] == "invalid_args"
    business = rpc(
        guess_client, "tools/call", {"session_id": sid, "name": "guess", "arguments": {"n": 999}}
    )
    assert business["error"]["data"]["error_type"] == "execution_error"


def test_sessionless_tools_use_a_fresh_instance(guess_client: TestClient) -> None:
    """As on an OpenEnv server: a bare `tools/*` without session gets a throwaway instance."""
    for _ in range(2):
        reply = rpc(guess_client, "tools/call", {"name": "guess", "arguments": {"n": 5}})
        assert reply["result"]["data"]["guesses"] == 1
    assert guess_client.get("/health").json()["sessions"] == 0


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("openenv/session/close", {}, -32602),
        ("openenv/session/close", {"session_id": 5}, -32602),
        ("openenv/session/close", {"session_id": "nope"}, -32000),
        ("openenv/nonsense", {}, -32601),
        ("openenv/session/create", [1, 2], -32602),
        ("openenv/session/create", "x", -32602),
        ("tools/list", {"session_id": ["a"]}, -32602),
        ("tools/list", {"session_id": ""}, -32000),
        ("tools/call", {"session_id": "forged-id-forged-id-1234"}, -32000),
    ],
)
def test_hostile_requests_get_structured_errors(
    guess_client: TestClient, method: str, params: Any, code: int
) -> None:
    assert rpc(guess_client, method, params)["error"]["code"] == code
    assert guess_client.get("/health").json()["status"] == "healthy"


def test_spec_mcp_is_untouched(guess_client: TestClient) -> None:
    """A spec client (SSE accepted, no session yet) still gets the spec transport's answers."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = guess_client.post("/mcp", json=body, headers=SPEC_ACCEPT)
    assert response.status_code == 400  # spec: no session, no initialize
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    response = guess_client.post("/mcp", json=init, headers=SPEC_ACCEPT)
    assert response.status_code == 200 and "mcp-session-id" in response.headers


def test_auth_and_principals(make_client: ClientFactory) -> None:
    principals = {"tok-a": {}, "tok-b": {}}
    client = make_client(GuessEnv, mode="production", principals=principals)
    body = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    refused = client.post("/mcp", json=body)
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]  # RFC 6750: says a bearer token is wanted
    assert challenge.startswith('Bearer realm="mcpgym", error="invalid_token"')
    assert "Authorization: Bearer <token>" in challenge
    # OAuth-first clients (Claude Code) register a client next: refused, naming the token
    registered = client.post("/register", json={"client_name": "x"})
    assert registered.status_code == 400
    assert "static bearer token" in registered.json()["error_description"]
    assert make_client(GuessEnv).post("/register", json={}).status_code == 404  # no token: none
    sid = create(client, authorization="Bearer tok-a")
    # another principal cannot use, or close, a's session
    other = rpc(client, "tools/list", {"session_id": sid}, authorization="Bearer tok-b")
    assert other["error"]["code"] == -32000
    closed = rpc(client, "openenv/session/close", {"session_id": sid}, authorization="Bearer tok-b")
    assert "error" in closed
    mine = rpc(client, "tools/list", {"session_id": sid}, authorization="Bearer tok-a")
    assert "result" in mine


@pytest.mark.parametrize("mode", ["simulation", "production"])
def test_capacity(make_client: ClientFactory, mode: str) -> None:
    client = make_client(GuessEnv, mode=mode, max_sessions=2)
    create(client)
    create(client)
    full = rpc(client, "openenv/session/create", {})["error"]
    assert full["code"] == -32000 and full["data"]["code"] == "CAPACITY_REACHED"


@pytest.mark.parametrize("mode", ["simulation", "production"])
def test_idle_sessions_are_reaped(make_client: ClientFactory, mode: str) -> None:
    client = make_client(
        GuessEnv, mode=mode, max_sessions=1, idle_timeout_s=0.2, reap_interval_s=0.05
    )
    sid = create(client)

    dialect = client.app.state.openenv  # type: ignore[attr-defined]
    # polled without touching the session (a request would keep it alive)
    wait_until(lambda: len(dialect) == 0, timeout=10.0, what="the idle session to be reaped")
    gone = rpc(client, "tools/list", {"session_id": sid})
    assert "Unknown session_id" in gone["error"]["message"]
    create(client)  # its slot is free again
    if mode == "simulation":
        assert client.get("/health").json()["sessions"] == 1


def test_websocket_attached_to_a_session(guess_client: TestClient) -> None:
    """`/ws?session_id=` plays on the session's own instance (OpenEnv's MCPToolClient opens it)."""
    sid = create(guess_client)
    rpc(guess_client, "tools/call", {"session_id": sid, "name": "guess", "arguments": {"n": 5}})
    with guess_client.websocket_connect(f"/ws?session_id={sid}") as ws:
        ws.send_json({"type": "state"})
        assert ws.receive_json()["data"]["guesses"] == [5]
        with (
            pytest.raises(WebSocketDisconnect),
            guess_client.websocket_connect(f"/ws?session_id={sid}") as twice,
        ):
            twice.receive_json()
    with (
        pytest.raises(WebSocketDisconnect),
        guess_client.websocket_connect("/ws?session_id=x") as ws,
    ):
        ws.receive_json()
    rpc(guess_client, "openenv/session/close", {"session_id": sid})


def test_production_attached_socket_controls_no_episode(make_client: ClientFactory) -> None:
    client = make_client(GuessEnv, mode="production")
    sid = create(client)
    with client.websocket_connect(f"/ws?session_id={sid}") as ws:
        for frame in ({"type": "reset"}, {"type": "step", "data": {}}, {"type": "state"}):
            ws.send_json(frame)
            reply = ws.receive_json()
            assert reply["type"] == "error" and reply["data"]["code"] == "SESSION_ERROR"
        ws.send_json({"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}})
        names = [t["name"] for t in ws.receive_json()["data"]["result"]["tools"]]
        assert "hint" not in names
    with pytest.raises(WebSocketDisconnect), client.websocket_connect("/ws") as plain:
        plain.receive_json()  # production /ws itself stays off


def test_session_close_closes_its_socket(guess_client: TestClient) -> None:
    sid = create(guess_client)
    with guess_client.websocket_connect(f"/ws?session_id={sid}") as ws:
        ws.send_json({"type": "state"})
        ws.receive_json()
        rpc(guess_client, "openenv/session/close", {"session_id": sid})
        with pytest.raises(WebSocketDisconnect):
            ws.receive_json()


@pytest.mark.parametrize("host", ["evil.test", "evil.test:8000", "127.0.0.1.evil.test", ""])
def test_dns_rebinding_guard_applies(guess_client: TestClient, host: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    response = guess_client.post("/mcp", json=body, headers={"host": host})
    assert response.status_code == 421
    assert guess_client.get("/health").json()["sessions"] == 0
