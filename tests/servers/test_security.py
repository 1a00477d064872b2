"""Security and reliability regressions, each a defect class, against a real uvicorn server:
impersonation over production `/ws`, timed-out sync calls and the shared pool, `blocking = False`,
strict JSON, wire limits on both HTTP parsers, JSON error bodies, quotas and disconnects."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from helpers.hostile import (
    CANCELLED,
    RELEASE,
    HangEnv,
    InlineBusyEnv,
    OwnCallsEnv,
    mcp_call,
    mcp_initialize,
)
from helpers.server import RunningServer, run_server
from helpers.wait import wait_until
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app
from mcpgym.servers.guards.limits import limited_protocol

pytestmark = pytest.mark.server

OPERATOR = "tok-operator"
PRINCIPALS = {"tok-alice": {"low": 1, "high": 10}, "tok-bob": {"low": 1, "high": 10}}


@pytest.fixture(autouse=True)
def released() -> Iterator[None]:
    RELEASE.clear()
    yield
    RELEASE.set()  # no hung thread outlives its test


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def step_frame(tool: str, request_id: int, timeout_s: float | None = None, **args: Any) -> str:
    frame: dict[str, Any] = {
        "type": "step",
        "id": request_id,
        "data": {"type": "call_tool", "tool_name": tool, "arguments": args},
    }
    if timeout_s is not None:
        frame["timeout_s"] = timeout_s
    return json.dumps(frame)


# -- 1. production /ws: only the operator's token opens it ----------------------------------------


@pytest.fixture(scope="module")
def production() -> Iterator[RunningServer]:
    app = create_app(
        GuessEnv, mode="production", token=OPERATOR, principals=PRINCIPALS, production_ws=True
    )
    with run_server(app) as running:
        yield running


@pytest.mark.parametrize(
    ("headers", "status"),
    [({}, 401), (bearer("wrong"), 401), (bearer("tok-alice"), 403), (bearer("tok-bob"), 403)],
    ids=["none", "wrong", "alice", "bob"],
)
async def test_production_ws_refuses_every_token_but_the_operators(
    production: RunningServer, headers: dict[str, str], status: int
) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(production.ws_url, additional_headers=headers):
            pass
    response = refused.value.response
    assert response.status_code == status  # refused before the upgrade
    assert json.loads(response.body or b"{}")["error"]["code"] in ("UNAUTHORIZED", "FORBIDDEN")
    async with connect(production.ws_url, additional_headers=bearer(OPERATOR)) as ws:
        await ws.send(json.dumps({"type": "reset", "id": 1}))
        assert json.loads(await ws.recv())["type"] == "observation"


def test_the_operator_token_has_no_identity_on_mcp(production: RunningServer) -> None:
    url = f"{production.url}/mcp"
    with httpx.Client(timeout=10) as client:
        with pytest.raises(httpx.HTTPStatusError) as refused:
            mcp_initialize(client, url, **bearer(OPERATOR))
        assert refused.value.response.status_code == 403
        assert refused.value.response.json()["error"]["code"] == "FORBIDDEN"
        session = mcp_initialize(client, url, **bearer("tok-alice"))  # a principal works
        assert mcp_call(client, url, session, "leaderboard", {})["result"]["isError"] is False
        assert production.health()["sessions"] >= 1  # production counts its MCP sessions


# -- 2/3. timed-out sync tools do not take the pool's capacity -------------------------------------


async def test_hung_sync_calls_do_not_stall_bystanders_or_new_sessions() -> None:
    with run_server(create_app(HangEnv, max_sessions=64)) as server:
        hung = [await connect(server.ws_url) for _ in range(12)]  # more than the pool's size
        try:
            for ws in hung:
                await ws.send(json.dumps({"type": "reset"}))
                await ws.recv()
            for i, ws in enumerate(hung):
                await ws.send(step_frame("hang", i, timeout_s=0.2))
            stuck = []
            for ws in hung:
                reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                error = reply["data"]["observation"]["error"]
                assert error["error_type"] == "timeout"
                if error.get("still_running"):  # else it timed out queued, and never ran
                    stuck.append(ws)
            assert len(stuck) >= 6
            started = time.monotonic()
            async with connect(server.ws_url) as bystander:  # a new session opens...
                await bystander.send(json.dumps({"type": "reset"}))
                await asyncio.wait_for(bystander.recv(), 5)
                await bystander.send(step_frame("ping", 1))  # ...and its sync call runs
                reply = json.loads(await asyncio.wait_for(bystander.recv(), 5))
            assert reply["data"]["observation"]["result"] == "pong"
            assert time.monotonic() - started < 2.0
            health = server.health()
            assert health["workers"]["detached"] == len(stuck)  # reported, not hidden
            await stuck[0].send(step_frame("ping", 99))  # a stuck session says why it refuses
            busy = json.loads(await asyncio.wait_for(stuck[0].recv(), 5))
            assert busy["data"]["code"] == "SESSION_ERROR" and busy["data"]["call"] == "hang"
        finally:
            RELEASE.set()
            for ws in hung:
                await ws.close()
        wait_until(lambda: server.health()["workers"]["detached"] == 0, what="hung calls return")


# -- 7. blocking = False honours timeouts and cannot keep the loop --------------------------------


@pytest.mark.parametrize("env", [InlineBusyEnv, OwnCallsEnv], ids=["inline", "own-call-tool"])
async def test_inline_calls_that_overrun_are_timed_out_and_moved_off_the_loop(env: type) -> None:
    with run_server(create_app(env)) as server:
        async with connect(server.ws_url) as ws:
            await ws.send(json.dumps({"type": "reset"}))
            await ws.recv()
            for attempt in (1, 2):  # the second overrun in a row moves the tool to the pool
                await ws.send(step_frame("busy", attempt, timeout_s=0.1, seconds=0.15))
                error = json.loads(await ws.recv())["data"]["observation"]["error"]
                assert error["error_type"] == "timeout" and error["ran_s"] >= 0.15
            await ws.send(step_frame("busy", 3, seconds=1.5))  # now in the pool: loop is free
            async with httpx.AsyncClient() as http:
                started = time.monotonic()
                assert (await http.get(f"{server.url}/health", timeout=5)).status_code == 200
                assert time.monotonic() - started < 0.5
            reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert reply["data"]["observation"]["result"] == "done"


# -- 4. strict JSON: non-finite numbers and deep nesting are invalid input ------------------------

HOSTILE_BODIES = [
    '{"seed": NaN}',
    '{"seed": 1e999}',
    '{"episode_id": NaN}',
    '{"seed": -Infinity}',
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 5000 + "1" + "}" * 5000,
]


@pytest.fixture(scope="module")
def simulation() -> Iterator[RunningServer]:
    with run_server(create_app(HangEnv)) as running:
        yield running


@pytest.mark.parametrize("body", HOSTILE_BODIES, ids=range(len(HOSTILE_BODIES)))
@pytest.mark.parametrize("route", ["/reset", "/step"])
def test_http_rejects_non_finite_and_deep_json(
    simulation: RunningServer, route: str, body: str
) -> None:
    response = httpx.post(f"{simulation.url}{route}", content=body, timeout=30)
    assert response.status_code == 400, response.text[:300]
    assert response.json()["error"]["code"] == "INVALID_JSON"


@pytest.mark.parametrize("body", HOSTILE_BODIES, ids=range(len(HOSTILE_BODIES)))
async def test_ws_rejects_non_finite_and_deep_json(simulation: RunningServer, body: str) -> None:
    async with connect(simulation.ws_url, max_size=None) as ws:
        await ws.send(body)
        reply = json.loads(await ws.recv(), parse_constant=lambda c: pytest.fail(c))
        assert reply["data"]["code"] == "INVALID_JSON"
        await ws.send(json.dumps({"type": "reset", "id": 2}))  # the session still works
        assert json.loads(await ws.recv())["id"] == 2


# -- 8. non-serialisable tool results, the same tool error on /ws and /mcp -------------------------


@pytest.mark.parametrize("kind", ["object", "bytes"])
async def test_a_non_json_result_is_a_tool_error_everywhere(
    simulation: RunningServer, kind: str
) -> None:
    async with connect(simulation.ws_url) as ws:
        await ws.send(json.dumps({"type": "reset"}))
        await ws.recv()
        await ws.send(step_frame("weird", 1, kind=kind))
        error = json.loads(await ws.recv())["data"]["observation"]["error"]
    assert error["error_type"] == "execution_error" and "cannot be sent as JSON" in error["message"]
    result = await asyncio.to_thread(_mcp_weird, f"{simulation.url}/mcp", kind)
    assert result["isError"] is True
    assert "cannot be sent as JSON" in result["content"][0]["text"]


def _mcp_weird(url: str, kind: str) -> dict[str, Any]:
    with httpx.Client(timeout=10) as client:
        session = mcp_initialize(client, url)
        result = mcp_call(client, url, session, "weird", {"kind": kind})["result"]
        client.delete(url, headers=session)
    return result


# -- 5. wire limits on both parsers ---------------------------------------------------------------


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_request_heads_are_bounded_on_both_parsers(parser: str) -> None:
    app = create_app(GuessEnv)
    settings = app.state.settings
    with run_server(app, http=limited_protocol(settings.max_header_bytes, parser)) as server:
        huge = {"X-Big": "a" * (4 * 1024 * 1024)}
        started = time.monotonic()
        response = httpx.get(f"{server.url}/health", headers=huge, timeout=30)
        assert response.status_code == 431 and time.monotonic() - started < 5
        assert response.json()["error"]["code"] == "HEADERS_TOO_LARGE"
        many = {f"X-H{i}": "1" for i in range(settings.max_headers + 1)}
        response = httpx.get(f"{server.url}/health", headers=many, timeout=10)
        assert response.status_code == 431 and response.json()["error"]["code"]
        bad = httpx.get(f"{server.url}/nowhere", timeout=10)
        assert bad.status_code == 404 and bad.json()["error"]["code"] == "NOT_FOUND"
        assert server.health()["status"] == "healthy"


def test_every_error_body_is_json(simulation: RunningServer) -> None:
    url = simulation.url
    with httpx.Client(timeout=10) as client:
        assert client.put(f"{url}/reset").json()["error"]["code"] == "METHOD_NOT_ALLOWED"
        big = client.post(
            f"{url}/mcp",
            content=b"{" + b" " * (5 * 1024 * 1024) + b"}",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        assert big.status_code == 413 and big.json()["error"]["code"] == -32600
        typed = client.post(
            f"{url}/mcp", content=b"{}", headers={"Content-Type": "text/plain", "Accept": "*/*"}
        )
        assert typed.status_code in (400, 415) and "error" in typed.json()


# -- 8. quotas, and a disconnect cancels the call in flight ----------------------------------------


def test_mcp_sessions_cannot_lock_ws_out() -> None:
    with run_server(create_app(HangEnv, max_sessions=2)) as server:
        url = f"{server.url}/mcp"
        with httpx.Client(timeout=10) as client:
            opened = [mcp_initialize(client, url) for _ in range(2)]
            for headers in opened:
                assert mcp_call(client, url, headers, "ping", {})["result"]["isError"] is False

            async def ws_works() -> bool:
                async with connect(server.ws_url) as ws:
                    await ws.send(json.dumps({"type": "reset"}))
                    return json.loads(await ws.recv())["type"] == "observation"

            assert asyncio.run(ws_works())
            for headers in opened:
                client.delete(url, headers=headers)


async def test_a_client_disconnect_cancels_the_step_in_flight(simulation: RunningServer) -> None:
    label = f"gone-{time.monotonic()}"
    async with connect(simulation.ws_url) as ws:
        await ws.send(json.dumps({"type": "reset"}))
        await ws.recv()
        await ws.send(step_frame("wait_forever", 1, label=label))
        await asyncio.sleep(0)  # hand the frame over, then vanish
    deadline = time.monotonic() + 10
    while label not in CANCELLED:
        assert time.monotonic() < deadline, "the call outlived its client"
        await asyncio.sleep(0.02)


# -- 8. stdio: deep nesting is answered with the request's id; lines are capped --------------------


def test_stdio_answers_deep_and_overlong_lines_and_keeps_serving() -> None:
    from helpers.mcp import StdioProcess

    proc = StdioProcess("mcpgym.examples.guess:GuessEnv", "--max-line-bytes", "65536")
    try:
        proc.initialize()
        deep = {"deep": json.loads("[" * 300 + "]" * 300)}
        request = {"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": deep}
        proc.send(request)
        reply = proc.receive()
        assert reply["id"] == 41 and reply["error"]["code"] in (-32600, -32602, -32700)
        proc.send(
            '{"jsonrpc":"2.0","id":42,"method":"ping","params":{"x":"' + "a" * 200_000 + '"}}'
        )
        reply = proc.receive()
        assert reply["error"]["code"] == -32600 and "exceeds" in reply["error"]["message"]
        again = proc.request("tools/call", {"name": "guess", "arguments": {"n": 5}}, 43)
        assert again["result"]["isError"] is False
    finally:
        proc.kill()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 0, True, "1"])
def test_timeout_s_must_be_a_positive_finite_number(value: Any) -> None:
    from mcpgym.errors import InvalidRequest
    from mcpgym.servers.dispatch import _timeout  # pyright: ignore[reportPrivateUsage]

    with pytest.raises(InvalidRequest, match="timeout_s"):
        _timeout(value)
