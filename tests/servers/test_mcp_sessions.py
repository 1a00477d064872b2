"""Who answers an MCP request (DESIGN.md §4).

Production: one long-lived instance, reset once at start-up, serves every MCP session (state
persists across sessions), or one per principal when the server has a token map. Simulation:
each MCP session gets its own instance, closed when the session ends. And the production
server's `/ws`: off unless `--production-ws`, which requires a token.
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from helpers.mcp import LEGACY, MCPGYM, http_client
from helpers.server import RunningServer, run_server
from helpers.wait import wait_until
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = pytest.mark.server


async def solve(client: Client) -> int:
    """Play GuessEnv to the end by bisection; returns the number of guesses."""
    low, high = 1, 100
    for count in range(1, 11):
        n = (low + high) // 2
        verdict = (await client.call_tool("guess", {"n": n})).structured_content
        assert verdict is not None
        if verdict["verdict"] == "correct":
            return count
        low, high = (n + 1, high) if verdict["verdict"] == "higher" else (low, n - 1)
    raise AssertionError("bisection did not finish in 10 guesses")


async def leaderboard(client: Client) -> list[int]:
    result = await client.call_tool("leaderboard", {"top": 5})
    assert result.structured_content is not None
    return result.structured_content["result"]


@pytest.fixture
def production() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv, mode="production")) as running:
        yield running


async def test_production_state_outlives_sessions(production: RunningServer) -> None:
    url = f"{production.url}/mcp"
    async with http_client(url, "legacy") as first:
        assert await leaderboard(first) == []
        guesses = await solve(first)
    async with http_client(url, "auto") as second:  # another session, another protocol era
        assert await leaderboard(second) == [guesses]
    async with http_client(url, "legacy") as third:
        assert await leaderboard(third) == [guesses]
    # production MCP sessions hold no instance, and a closed one is no longer counted
    production.wait_for_sessions(0)


def _initialize(session: str | None = None) -> tuple[dict[str, str], dict[str, object]]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": LEGACY}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    body: dict[str, object] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "count-test", "version": "0"},
        },
    }
    return headers, body


def _open_sessions(http: httpx.Client, n: int) -> list[str]:
    opened: list[str] = []
    for _ in range(n):
        headers, body = _initialize()
        response = http.post("/mcp", json=body, headers={**headers, **_AUTH})
        assert response.status_code == 200, response.text
        opened.append(response.headers["mcp-session-id"])
    return opened


_AUTH = {"Authorization": "Bearer tok-a"}
_PRINCIPALS = {"tok-a": {"low": 1, "high": 100}}


@pytest.mark.parametrize("mode", ["production", "simulation"])
def test_health_counts_exactly_the_live_mcp_sessions(mode: str) -> None:
    """Every way a session ends, on every supported `mcp`: DELETE ends it at once; a refused
    DELETE (no token) or a forged or unknown id changes nothing."""
    app = create_app(GuessEnv, mode=mode, principals=_PRINCIPALS)
    with run_server(app) as server, httpx.Client(base_url=server.url, timeout=10) as http:
        opened = _open_sessions(http, 3)
        server.wait_for_sessions(3)
        # forged ids, and an initialize that carries an unknown id, open and end nothing
        for forged in ("nope", opened[0] + "x"):
            headers, body = _initialize(forged)
            assert http.post("/mcp", json=body, headers={**headers, **_AUTH}).status_code == 404
            assert http.delete("/mcp", headers={**headers, **_AUTH}).status_code == 404
        assert server.health()["sessions"] == 3
        headers, _ = _initialize(opened[0])
        assert http.delete("/mcp", headers=headers).status_code == 401
        assert server.health()["sessions"] == 3
        # a DELETE ends its session at once (no waiting for the idle timeout), for good
        assert http.delete("/mcp", headers={**headers, **_AUTH}).status_code in (200, 204)
        assert server.health()["sessions"] == 2
        assert http.delete("/mcp", headers={**headers, **_AUTH}).status_code == 404
        assert server.health()["sessions"] == 2
        for sid in opened[1:]:
            headers, _ = _initialize(sid)
            assert http.delete("/mcp", headers={**headers, **_AUTH}).status_code in (200, 204)
        assert server.health()["sessions"] == 0


@pytest.mark.parametrize("mode", ["production", "simulation"])
def test_health_stops_counting_idle_mcp_sessions_the_server_reaped(mode: str) -> None:
    app = create_app(
        GuessEnv, mode=mode, principals=_PRINCIPALS, idle_timeout_s=0.5, reap_interval_s=0.05
    )
    with run_server(app) as server, httpx.Client(base_url=server.url, timeout=10) as http:
        opened = _open_sessions(http, 2)
        server.wait_for_sessions(0, timeout=15)
        # the count agrees with the transport: it has reaped them too (a request would revive a
        # live one, so each id is asked once)
        for sid in opened:
            headers, _ = _initialize(sid)
            assert http.delete("/mcp", headers={**headers, **_AUTH}).status_code == 404


async def test_each_principal_gets_its_own_instance() -> None:
    principals = {"tok-alice": {"low": 1, "high": 100}, "tok-bob": {"low": 1, "high": 100}}
    with run_server(create_app(GuessEnv, mode="production", principals=principals)) as server:
        url = f"{server.url}/mcp"
        async with http_client(url, "legacy", token="tok-alice") as alice:
            guesses = await solve(alice)
        async with http_client(url, "auto", token="tok-bob") as bob:
            assert await leaderboard(bob) == []
        async with http_client(url, "auto", token="tok-alice") as alice_again:
            assert await leaderboard(alice_again) == [guesses]
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(url, json={}, headers={"Accept": "application/json"})
        assert anonymous.status_code == 401


async def test_simulation_sessions_get_their_own_instances() -> None:
    with run_server(create_app(GuessEnv)) as server:
        url = f"{server.url}/mcp"
        async with http_client(url, "legacy") as one, http_client(url, "legacy") as two:
            assert server.health()["sessions"] == 2
            counts = [
                (await client.call_tool("guess", {"n": n})).structured_content
                for client, n in ((one, 10), (one, 20), (two, 10))
            ]
            assert [c["guesses"] if c else None for c in counts] == [1, 2, 1]
            hint = await one.call_tool("hint", {})  # simulation tools exist here
            assert hint.is_error is False
        # leaving the client sends DELETE: both sessions and their instances are closed
        wait_until(lambda: server.health()["sessions"] == 0, timeout=10, what="MCP sessions closed")


# -- the production server's /ws, through the real command line -----------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(*args: str) -> tuple[subprocess.Popen[str], int]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            *MCPGYM,
            "serve",
            "mcpgym.examples.guess:GuessEnv",
            "--mode",
            "production",
            "--port",
            str(port),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, port


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def _ws_status(port: int, headers: dict[str, str]) -> int:
    """101 when /ws serves a reset; the HTTP status of the refusal otherwise (1008 for a close)."""
    try:
        with connect(
            f"ws://127.0.0.1:{port}/ws", additional_headers=headers, open_timeout=10
        ) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            reply = json.loads(ws.recv(timeout=10))
            return 101 if reply["type"] == "observation" else 1008
    except InvalidStatus as exc:
        return exc.response.status_code
    except Exception:
        return 1008


def test_production_ws_needs_the_flag_and_a_token(tmp_path: Path) -> None:
    refused, _ = _serve("--production-ws")  # no token: refused at start-up
    plain, plain_port = _serve()
    with_ws, ws_port = _serve("--production-ws", "--token", "opsecret")
    try:
        _, err = refused.communicate(timeout=60)
        assert refused.returncode == 2 and "token" in err
        wait_until(
            lambda: _healthy(plain_port) and _healthy(ws_port), timeout=60, what="servers up"
        )
        for path in ("/reset", "/step"):
            assert httpx.post(f"http://127.0.0.1:{plain_port}{path}", json={}).status_code == 404
        assert httpx.get(f"http://127.0.0.1:{plain_port}/state").status_code == 404
        assert _ws_status(plain_port, {}) != 101  # no /ws route at all
        assert _ws_status(ws_port, {}) != 101
        assert _ws_status(ws_port, {"Authorization": "Bearer nope"}) != 101
        assert _ws_status(ws_port, {"Authorization": "Bearer opsecret"}) == 101
    finally:
        for proc in (refused, plain, with_ws):
            if proc.poll() is None:
                proc.terminate()
            proc.communicate(timeout=30)
