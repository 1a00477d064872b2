"""OpenEnv's dialect and spec `/mcp` share one strict parser and one set of limits (issue 26,
defects 3 and 7): deep nesting and non-finite numbers are 4xx before anything is created, the
production `/ws?session_id=` attachment answers a hostile frame and keeps serving, and one
principal cannot take every session (429, `QUOTA_REACHED`) while another still gets in."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from websockets.sync.client import connect

from helpers.hostile import mcp_initialize
from helpers.server import RunningServer, run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

DEEP = "[" * 5000 + "]" * 5000
HOSTILE_CREATES = [
    '{"jsonrpc":"2.0","id":NaN,"method":"openenv/session/create"}',
    '{"jsonrpc":"2.0","id":1e999,"method":"openenv/session/create"}',
    '{"jsonrpc":"2.0","id":Infinity,"method":"openenv/session/create","params":{}}',
    '{"jsonrpc":"2.0","id":1,"method":"openenv/session/create","params":{"x":' + DEEP + "}}",
    '{"jsonrpc":"2.0","id":1.5,"method":"openenv/session/create"}',
    '{"jsonrpc":"2.0","id":true,"method":"openenv/session/create"}',
    '{"jsonrpc":"2.0","id":[1],"method":"openenv/session/create"}',
    '[{"jsonrpc":"2.0","id":1,"method":"openenv/session/create"}]',
]


def _leases(server: RunningServer) -> int:
    dialect = getattr(server.server.config.app.state, "openenv", None)
    return 0 if dialect is None else len(dialect)


@pytest.fixture(scope="module", params=["simulation", "production"])
def served(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv, mode=request.param)) as server:
        yield server


@pytest.mark.parametrize("body", HOSTILE_CREATES, ids=range(len(HOSTILE_CREATES)))
def test_a_refused_create_creates_nothing(served: RunningServer, body: str) -> None:
    before = served.health()["sessions"], _leases(served)
    reply = httpx.post(f"{served.url}/mcp", content=body, timeout=30)
    assert 400 <= reply.status_code < 500, reply.text[:300]
    error = reply.json()["error"]
    assert error["code"] in (-32700, -32600), error
    assert (served.health()["sessions"], _leases(served)) == before


def test_hostile_tool_calls_on_a_dialect_session(served: RunningServer) -> None:
    url = f"{served.url}/mcp"
    create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}
    sid = httpx.post(url, json=create, timeout=30).json()["result"]["session_id"]
    for poison in ("NaN", "1e999", DEEP):
        params = json.dumps({"session_id": sid, "name": "guess", "arguments": {"n": 0}})
        params = params.replace('"n": 0', f'"n": {poison}')
        body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":' + params + "}"
        reply = httpx.post(url, content=body, timeout=30)
        assert reply.status_code == 400 and reply.json()["error"]["code"] == -32700
    call = {"session_id": sid, "name": "guess", "arguments": {"n": 3}}
    ok = httpx.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
    assert "result" in ok.json(), ok.text


def test_the_production_attachment_answers_hostile_frames() -> None:
    with run_server(create_app(GuessEnv, mode="production")) as server:
        create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}
        sid = httpx.post(f"{server.url}/mcp", json=create).json()["result"]["session_id"]
        with connect(f"{server.ws_url}?session_id={sid}") as ws:
            for frame in (DEEP, '{"type":' + DEEP + "}", '{"type":"reset","data":NaN}'):
                ws.send(frame)
                reply = json.loads(ws.recv(timeout=10))
                assert reply["type"] == "error" and reply["data"]["code"] == "INVALID_JSON"
            ws.send(json.dumps({"type": "reset"}))
            assert json.loads(ws.recv(timeout=10))["data"]["code"] == "SESSION_ERROR"
            listing = {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}
            ws.send(json.dumps({"type": "mcp", "data": listing}))
            assert json.loads(ws.recv(timeout=10))["data"]["result"]["tools"]


PRINCIPALS = {"tok-alice": {}, "tok-bob": {}}


@pytest.mark.parametrize("mode", ["simulation", "production"])
def test_one_principal_cannot_take_every_session(mode: str) -> None:
    app = create_app(GuessEnv, mode=mode, principals=PRINCIPALS, principal_sessions=2)
    with run_server(app) as server, httpx.Client(timeout=30) as client:
        url = f"{server.url}/mcp"
        alice = {"Authorization": "Bearer tok-alice"}
        held = [mcp_initialize(client, url, **alice) for _ in range(2)]
        refused = client.post(url, json=_initialize(), headers={**alice, **_ACCEPT})
        assert refused.status_code == 429 and refused.headers["retry-after"]
        assert refused.json()["error"]["code"] == -32000
        mcp_initialize(client, url, Authorization="Bearer tok-bob")  # bob is not locked out
        assert client.delete(url, headers=held[0]).status_code == 200
        mcp_initialize(client, url, **alice)  # a freed slot is hers again
        create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}
        for _ in range(2):
            assert "result" in client.post(url, json=create, headers=alice).json()
        full = client.post(url, json=create, headers=alice).json()["error"]
        assert full["data"]["code"] == "QUOTA_REACHED" and full["data"]["quota"] == 2
        assert (
            "result"
            in client.post(url, json=create, headers={"Authorization": "Bearer tok-bob"}).json()
        )


_ACCEPT = {"Accept": "application/json, text/event-stream"}


def _initialize() -> dict[str, object]:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "quota", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def test_stdio_refuses_what_is_not_strict_json() -> None:
    from helpers.mcp import StdioProcess

    proc = StdioProcess("mcpgym.examples.guess:GuessEnv")
    try:
        proc.initialize()
        head = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"guess",'
        for rid, poison in enumerate(("NaN", "1e999", "-Infinity"), start=5):
            proc.send((head % rid) + '"arguments":{"n":' + poison + "}}}")
            reply = proc.receive()
            assert reply["id"] == rid and reply["error"]["code"] == -32700, reply
        good = proc.request("tools/call", {"name": "guess", "arguments": {"n": 5}}, 9)
        assert good["result"]["isError"] is False
    finally:
        proc.kill()
