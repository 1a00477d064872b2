"""The outbound result cap (issue 26, defect 4) on every transport: a result over
`max_result_bytes` is a structured `RESULT_TOO_LARGE` tool error the agent can act on, a result
under it arrives whole, big ones are encoded off the event loop, and a 100 MiB attempt stalls
nobody. Every kind of tool: sync in the pool, async, and a class running tools its own way."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from helpers.hostile import BigEnv, BigOwnCallsEnv, mcp_call, mcp_initialize
from helpers.mcp import StdioProcess
from helpers.server import RunningServer, run_server
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

CAP = 64 * 1024
OVER = {"blob": CAP + 10, "rows": CAP // 10, "ablob": CAP + 10}
UNDER = {"blob": CAP // 2, "rows": CAP // 40, "ablob": CAP // 2}
TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", params=[BigEnv, BigOwnCallsEnv], ids=["pool", "own-calls"])
def big(request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    app = create_app(request.param, max_result_bytes=CAP, ors_wire=True)
    with run_server(app) as running:
        yield running


def _too_large(error: dict[str, Any]) -> None:
    assert error["reason"] == "RESULT_TOO_LARGE", error
    assert error["limit_bytes"] == CAP and error["size_at_least"] > CAP, error
    assert "Ask for less" in error["message"]


def _ws_step(url: str, tool: str, n: int) -> dict[str, Any]:
    with connect(url, max_size=None) as ws:
        ws.send(json.dumps({"type": "reset"}))
        ws.recv()
        action = {"type": "call_tool", "tool_name": tool, "arguments": {"n": n}}
        ws.send(json.dumps({"type": "step", "data": action}))
        return json.loads(ws.recv())["data"]["observation"]


def _ws_mcp(url: str, tool: str, n: int) -> dict[str, Any]:
    with connect(url, max_size=None) as ws:
        ws.send(json.dumps({"type": "reset"}))
        ws.recv()
        call = {"name": tool, "arguments": {"n": n}}
        request = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}
        ws.send(json.dumps({"type": "mcp", "data": request}))
        return json.loads(ws.recv())["data"]["result"]


@pytest.mark.parametrize("tool", sorted(OVER))
def test_ws_and_http_steps(big: RunningServer, tool: str) -> None:
    obs = _ws_step(big.ws_url, tool, OVER[tool])
    assert obs["result"] is None
    _too_large(obs["error"])
    assert _ws_step(big.ws_url, tool, UNDER[tool])["error"] is None
    action = {"type": "call_tool", "tool_name": tool, "arguments": {"n": OVER[tool]}}
    reply = httpx.post(f"{big.url}/step", json={"action": action}, timeout=30)
    assert reply.status_code == 200
    _too_large(reply.json()["observation"]["error"])
    action["arguments"] = {"n": UNDER[tool]}
    whole = httpx.post(f"{big.url}/step", json={"action": action}, timeout=30).json()
    assert whole["observation"]["error"] is None and whole["observation"]["result"]


@pytest.mark.parametrize("tool", sorted(OVER))
def test_mcp_spec_ws_frame_and_openenv_dialect(big: RunningServer, tool: str) -> None:
    url = f"{big.url}/mcp"
    with httpx.Client(timeout=30) as client:
        headers = mcp_initialize(client, url)
        result = mcp_call(client, url, headers, tool, {"n": OVER[tool]})["result"]
        assert result["isError"] is True
        _too_large(json.loads(result["content"][0]["text"]))
        fine = mcp_call(client, url, headers, tool, {"n": UNDER[tool]})["result"]
        assert fine["isError"] is False
        framed = _ws_mcp(big.ws_url, tool, OVER[tool])
        assert framed["isError"] is True
        _too_large(json.loads(framed["content"][0]["text"]))
        created = client.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create"}
        )
        sid = created.json()["result"]["session_id"]
        call = {"session_id": sid, "name": tool, "arguments": {"n": OVER[tool]}}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
        refused = client.post(url, json=body).json()
        _too_large(refused["error"]["data"])


def test_ors_wire(big: RunningServer) -> None:
    with httpx.Client(base_url=big.url, timeout=30) as c:
        lease = c.post("/create_session", json={}).text
        sid = lease.split("data: ", 1)[1].split("\n", 1)[0]
        assert c.post("/create", json={"task_spec": {"reset": {}}}, headers={"X-Session-ID": sid})
        reply = c.post(
            "/call", json={"name": "blob", "input": {"n": CAP + 10}}, headers={"X-Session-ID": sid}
        )
        assert reply.status_code == 200 and "RESULT_TOO_LARGE" in reply.text, reply.text[:300]


def test_stdio_caps_at_its_default() -> None:
    proc = StdioProcess("helpers.hostile:BigEnv", cwd=str(TESTS))
    try:
        proc.initialize()
        call = {"name": "blob", "arguments": {"n": 5 * 1024 * 1024}}
        result = proc.request("tools/call", call, request_id=3)["result"]
        assert result["isError"] is True and "RESULT_TOO_LARGE" in result["content"][0]["text"]
        small = proc.request("tools/call", {"name": "blob", "arguments": {"n": 10}}, request_id=4)
        assert small["result"]["isError"] is False
    finally:
        proc.kill()


def _bystander(url: str, stop: threading.Event, gaps: list[float]) -> None:
    with connect(url) as ws:
        ws.send(json.dumps({"type": "reset"}))
        ws.recv()
        ping = json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "ping"}})
        while not stop.is_set():
            started = time.perf_counter()
            ws.send(ping)
            ws.recv()
            gaps.append(time.perf_counter() - started)
            time.sleep(0.002)


@pytest.mark.parametrize("via", ["ws", "mcp"])
def test_a_100_mib_result_stalls_nobody(via: str) -> None:
    with run_server(create_app(BigEnv)) as running:
        url = f"{running.url}/mcp"
        with httpx.Client(timeout=60) as client:
            headers = mcp_initialize(client, url)  # MCP is built before the clock starts
            mcp_call(client, url, headers, "blob", {"n": "warm"})  # and its error path loaded
            stop, gaps = threading.Event(), []
            watcher = threading.Thread(target=_bystander, args=(running.ws_url, stop, gaps))
            watcher.start()
            try:
                time.sleep(0.3)
                gaps.clear()
                if via == "ws":
                    obs = _ws_step(running.ws_url, "blob", 100 * 1024 * 1024)
                    assert obs["error"]["reason"] == "RESULT_TOO_LARGE"
                else:
                    answer = mcp_call(client, url, headers, "blob", {"n": 100 * 1024 * 1024})
                    assert "RESULT_TOO_LARGE" in answer["result"]["content"][0]["text"]
                time.sleep(0.2)
            finally:
                stop.set()
                watcher.join(timeout=30)
    assert len(gaps) > 10
    # before the cap: 1.85 s (/ws) and 2.38 s (/mcp); the tool's own 100 MiB allocation remains
    assert max(gaps) < 0.5, sorted(gaps)[-5:]


async def test_a_step_reply_is_walked_only_when_its_result_may_be_big() -> None:
    """The WS loop encodes a step reply inline without its own size walk only when the result
    was measured small; a result past `BIG_REPLY_BYTES` (under the cap) still goes off the loop,
    and one over the cap becomes the structured error."""
    from mcpgym import CallToolObservation
    from mcpgym.servers.dispatch import measured
    from mcpgym.servers.wire_json import BIG_REPLY_BYTES

    def obs(result: Any) -> CallToolObservation:
        return CallToolObservation(tool_name="t", result=result)

    small = obs({"hint": "higher"})
    assert await measured(small, CAP) == (small, True)
    assert (await measured(obs(None), CAP))[1] is True
    big = obs("x" * (BIG_REPLY_BYTES + 1))
    assert await measured(big, 10 * BIG_REPLY_BYTES) == (big, False)
    many = obs(list(range(1000)))  # more nodes than the inline walk takes: not certainly small
    assert (await measured(many, CAP))[1] is False
    over, is_small = await measured(obs("x" * (CAP + 1)), CAP)
    assert not is_small and over.error is not None and over.result is None
