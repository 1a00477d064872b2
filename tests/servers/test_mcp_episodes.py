"""Operator-opened `/mcp` episodes (servers/mcp/episodes.py) on a real uvicorn server.

The official `mcp` client plays `/mcp?episode=ID` (both protocol eras, reconnecting between
calls), and what it sees and what the episode records equal what mcpgym's own `/ws` client gets
for the same calls from the same reset; every hostile input is a structured 4xx; a token or
principal server keeps episode control with the operator while the episode id alone plays.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from helpers.mcp import ClientMode, http_client
from helpers.server import RunningServer, run_server
from mcpgym.client.generic import SyncGenericEnvClient
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app
from mcpgym.servers.mcp.episode_routes import MAX_BODY_BYTES

pytestmark = pytest.mark.server

TOKEN = "operator-secret-0123456789"
ALICE = "principal-alice-0123456789"


@pytest.fixture(scope="module")
def guess() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv)) as server:
        yield server


@pytest.fixture(scope="module")
def guarded() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv, token=TOKEN)) as server:
        yield server


def _open(url: str, reset: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    reply = httpx.post(f"{url}/mcp/episodes", json={"reset": reset}, headers=headers, timeout=10)
    assert reply.status_code == 201, reply.text
    return reply.json()


async def _http(method: str, url: str, **options: Any) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as http:
        return await http.request(method, url, **options)


async def _aopen(url: str, reset: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    return await asyncio.to_thread(_open, url, reset, token)


def _verdict(result: Any) -> str:
    data = result.structured_content
    return (data if isinstance(data, dict) else json.loads(result.content[0].text))["verdict"]


async def _bisect(url: str, mode: ClientMode, reconnect: bool) -> list[tuple[int, Any]]:
    """Bisection on `url` with the official client, by the answers it gets; (guess, answer)."""
    low, high, seen = 1, 100, []
    client_cm = None if reconnect else http_client(url, mode)
    client: Client | None = await client_cm.__aenter__() if client_cm else None
    try:
        for _ in range(10):
            n = (low + high) // 2
            if client is None:  # a fresh MCP connection for every call, as retrying harnesses do
                async with http_client(url, mode) as fresh:
                    result = await fresh.call_tool("guess", {"n": n})
            else:
                result = await client.call_tool("guess", {"n": n})
            verdict = _verdict(result)
            seen.append((n, verdict))
            if verdict == "correct":
                return seen
            low, high = (n + 1, high) if verdict == "higher" else (low, n - 1)
    finally:
        if client_cm is not None:
            await client_cm.__aexit__(None, None, None)
    raise AssertionError(f"bisection on the MCP episode did not finish: {seen}")


def _ws_steps(url: str, reset: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> Any:
    """mcpgym's own client: the same calls from the same reset; (answers, rewards, done)."""
    with SyncGenericEnvClient(url) as env:
        env.reset(**reset)
        answers, rewards, done = [], [], False
        for name, arguments in calls:
            step = env.call_tool(name, arguments)
            answers.append(step.observation["result"] or step.observation["error"])
            rewards.append(step.reward)
            done = step.done
        return answers, rewards, done


@pytest.mark.parametrize(
    ("mode", "reconnect"), [("legacy", False), ("auto", False), ("auto", True)]
)
async def test_the_mcp_episode_is_the_reset_one_and_its_record_is_the_ws_episode(
    guess: RunningServer, mode: ClientMode, reconnect: bool
) -> None:
    for seed in (3, 7, 11):
        opened = await _aopen(guess.url, {"seed": seed})
        assert opened["observation"]["metadata"]["prompt"].startswith("Guess the integer")
        played = await _bisect(f"{guess.url}{opened['url']}", mode, reconnect)
        calls = [("guess", {"n": n}) for n, _ in played]
        answers, rewards, done = _ws_steps(guess.url, {"seed": seed}, calls)
        assert [a["verdict"] for a in answers] == [v for _, v in played]  # the same episode
        record = (await _http("GET", f"{guess.url}/mcp/episodes/{opened['episode']}")).json()
        assert [(c["tool"], c["arguments"]) for c in record["calls"]] == calls
        assert [c["reward"] for c in record["calls"]] == pytest.approx(rewards)
        assert record["reward"] == pytest.approx(sum(rewards)) and record["done"] is done is True
        # after done nothing runs and nothing is scored
        async with http_client(f"{guess.url}{opened['url']}", mode) as client:
            late = await client.call_tool("guess", {"n": 1})
        assert late.is_error and "episode is over" in late.content[0].text  # type: ignore[union-attr]
        closed = (await _http("DELETE", f"{guess.url}/mcp/episodes/{opened['episode']}")).json()
        assert closed["steps"] == len(calls) and closed["live"] is False
        gone = await _http(
            "POST",
            f"{guess.url}{opened['url']}",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert gone.status_code == 404 and gone.json()["error"]["code"] == -32602
        kept = (await _http("GET", f"{guess.url}/mcp/episodes/{opened['episode']}")).json()
        assert kept == closed  # an ended episode's record stays readable


async def test_tool_errors_are_scored_steps_like_ws(guess: RunningServer) -> None:
    opened = await _aopen(guess.url, {"seed": 5, "low": 1, "high": 8})
    calls = [("guess", {"n": 0}), ("hint", {}), ("guess", {"n": "x"}), ("guess", {"n": 4})]
    async with http_client(f"{guess.url}{opened['url']}", "auto") as client:
        for name, arguments in calls:
            await client.call_tool(name, arguments)
    _, rewards, _ = _ws_steps(guess.url, {"seed": 5, "low": 1, "high": 8}, calls)
    record = (await _http("DELETE", f"{guess.url}/mcp/episodes/{opened['episode']}")).json()
    assert [c["reward"] for c in record["calls"]] == pytest.approx(rewards)
    assert record["calls"][0]["error"]["error_type"] == "execution_error"
    assert record["calls"][2]["error"]["error_type"] == "invalid_args"


HOSTILE_BODIES: list[tuple[bytes, int]] = [
    (b"{not json", 422),
    (b"[1, 2]", 422),
    (b'"reset"', 422),
    (b'{"reset": [1]}', 422),
    (b'{"reset": "seed=1"}', 422),
    (b'{"reset": 0}', 422),
    (b'{"reset": false}', 422),
    (b'{"reset": ""}', 422),
    (b'{"reset": {}, "extra": 1}', 422),
    (b'{"reset": {"seed": "one"}}', 422),
    (b'{"reset": {"seed": true}}', 422),
    (b'{"reset": {"episode_id": 5}}', 422),
    (b'{"reset": {"low": 9, "high": 1}}', 422),  # reset raises ValueError
    (b'{"reset": {"low": "abc"}}', 422),  # reset raises on a wrong type
    (b'{"reset": {"seed": 1' + b"0" * 5000 + b"}}", 422),  # a huge integer
    (b'{"reset": {"low": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}}', 413),
    (b"\xff\xfe", 422),
    (b'{"reset": {"low": ' + b"[" * 30_000 + b"]" * 30_000 + b"}}", 422),  # nesting too deep
    (b'{"reset": {"low": 1e999}}', 422),
]


@pytest.mark.parametrize(("body", "status"), HOSTILE_BODIES, ids=range(len(HOSTILE_BODIES)))
def test_hostile_episode_openings_are_structured_4xx(
    guess: RunningServer, body: bytes, status: int
) -> None:
    reply = httpx.post(f"{guess.url}/mcp/episodes", content=body, timeout=10)
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert error["code"] and error["message"]
    assert guess.health()["sessions"] == 0  # a refused reset holds no instance


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("episode=", 400),
        ("episode=short", 400),
        ("episode=" + "A" * 32 + "&episode=" + "B" * 32, 400),
        ("episode=" + "%00" * 32, 400),
        ("episode=" + "A" * 32, 404),
        ("episode=" + "A" * 5000, 400),
    ],
)
def test_hostile_episode_urls_are_json_rpc_4xx(
    guess: RunningServer, guarded: RunningServer, query: str, status: int
) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    for server in (guess, guarded):  # no token needed to be refused
        reply = httpx.post(f"{server.url}/mcp?{query}", json=request, headers=accept)
        assert reply.status_code == status, reply.text
        assert reply.json()["error"]["code"] == -32602
    for path in ("/mcp/episodes/" + "A" * 32, "/mcp/episodes/x"):
        assert httpx.get(f"{guess.url}{path}").status_code == 404


def test_production_mcp_has_no_episodes() -> None:
    with run_server(create_app(GuessEnv, mode="production")) as server:
        reply = httpx.post(f"{server.url}/mcp/episodes", json={"reset": {"seed": 1}})
        assert reply.status_code in (404, 405)
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"Accept": "application/json, text/event-stream"}
        reply = httpx.post(f"{server.url}/mcp?episode={'A' * 32}", json=request, headers=accept)
        assert reply.status_code == 400 and "simulation" in reply.json()["error"]["message"]


async def test_a_token_server_opens_episodes_for_the_operator_and_plays_them_by_id(
    guarded: RunningServer,
) -> None:
    assert (
        await _http("POST", f"{guarded.url}/mcp/episodes", json={"reset": {}})
    ).status_code == 401
    wrong = {"Authorization": "Bearer nope"}
    assert (
        await _http("POST", f"{guarded.url}/mcp/episodes", json={"reset": {}}, headers=wrong)
    ).status_code == 401
    opened = await _aopen(guarded.url, {"seed": 3}, TOKEN)
    played = await _bisect(f"{guarded.url}{opened['url']}", "legacy", reconnect=False)  # no bearer
    assert played[-1][1] == "correct"
    episode = f"{guarded.url}/mcp/episodes/{opened['episode']}"
    assert (
        await _http("GET", episode)
    ).status_code == 401  # the id plays; it does not read the reward
    assert (await _http("DELETE", episode)).status_code == 401
    record = (await _http("GET", episode, headers={"Authorization": f"Bearer {TOKEN}"})).json()
    assert record["done"] is True and record["steps"] == len(played)
    # the id opens spec MCP only: not OpenEnv's dialect, whose sessions are fresh instances
    create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    dialect = await _http("POST", f"{guarded.url}{opened['url']}", json=create)
    assert "session_id" not in dialect.text, dialect.text
    # without an episode id /mcp still wants the token
    plain = await _http(
        "POST",
        f"{guarded.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert plain.status_code == 401


def test_principals_never_open_or_read_episodes() -> None:
    app = create_app(GuessEnv, token=TOKEN, principals={ALICE: {"low": 1, "high": 3}})
    with run_server(app) as server:
        alice = {"Authorization": f"Bearer {ALICE}"}
        reply = httpx.post(f"{server.url}/mcp/episodes", json={"reset": {}}, headers=alice)
        assert reply.status_code == 403 and reply.json()["error"]["code"] == "FORBIDDEN"
        opened = _open(server.url, {"seed": 1}, TOKEN)
        episode = f"{server.url}/mcp/episodes/{opened['episode']}"
        assert httpx.get(episode, headers=alice).status_code == 403
        assert httpx.delete(episode, headers=alice).status_code == 403


def test_episodes_count_against_the_mcp_quota() -> None:
    with run_server(create_app(GuessEnv, max_mcp_sessions=1)) as server:
        first = _open(server.url, {"seed": 1})
        full = httpx.post(f"{server.url}/mcp/episodes", json={"reset": {"seed": 2}})
        assert full.status_code == 503 and full.json()["error"]["code"] == "CAPACITY_REACHED"
        httpx.delete(f"{server.url}/mcp/episodes/{first['episode']}")
        _open(server.url, {"seed": 2})


def test_ended_records_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpgym.servers.mcp import episodes as mcp_episodes

    with run_server(create_app(GuessEnv)) as server:
        first = _open(server.url, {"seed": 1})
        live = _open(server.url, {"seed": 2})
        assert httpx.delete(f"{server.url}/mcp/episodes/{first['episode']}").status_code == 200
        monkeypatch.setattr(mcp_episodes, "RECORD_TTL_S", -1.0)
        _open(server.url, {"seed": 3})  # opening forgets what has expired
        assert httpx.get(f"{server.url}/mcp/episodes/{first['episode']}").status_code == 404
        assert httpx.get(f"{server.url}/mcp/episodes/{live['episode']}").status_code == 200
        monkeypatch.setattr(mcp_episodes, "MAX_RECORDS", 1)
        ended = [_open(server.url, {"seed": n}) for n in (4, 5)]
        for opened in ended:
            httpx.delete(f"{server.url}/mcp/episodes/{opened['episode']}")
        monkeypatch.setattr(mcp_episodes, "RECORD_TTL_S", 900.0)
        _open(server.url, {"seed": 6})  # over MAX_RECORDS: ended records go, live ones stay
        for opened in ended:
            assert httpx.get(f"{server.url}/mcp/episodes/{opened['episode']}").status_code == 404
        assert httpx.get(f"{server.url}/mcp/episodes/{live['episode']}").status_code == 200


async def test_an_episode_records_a_bounded_number_of_calls(
    guess: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcpgym.servers.mcp import episodes as mcp_episodes

    monkeypatch.setattr(mcp_episodes, "MAX_EPISODE_CALLS", 2)
    opened = await _aopen(guess.url, {"seed": 9, "secret": 100})
    async with http_client(f"{guess.url}{opened['url']}", "auto") as client:
        answers = [await client.call_tool("guess", {"n": 1}) for _ in range(3)]
    assert [a.is_error for a in answers] == [False, False, True]
    assert "the most it may" in answers[2].content[0].text  # type: ignore[union-attr]
    record = (await _http("DELETE", f"{guess.url}/mcp/episodes/{opened['episode']}")).json()
    assert record["steps"] == 2
