"""A real uvicorn server on 127.0.0.1: raw WebSocket episodes, a vanishing client, 200 concurrent
sessions, HTTP over the socket, and full episodes with `EnvClient` (async and `.sync()`)."""

import asyncio
import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import ClientConnection, connect

from helpers.envs import SlowGuessEnv
from helpers.server import RunningServer, run_server
from helpers.wait import await_until, wait_until
from mcpgym import CallToolObservation, EnvClient, GenericEnvClient, SyncEnvClient
from mcpgym.examples.guess import GuessEnv, GuessState
from mcpgym.servers import create_app

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv)) as running:
        yield running


@pytest.fixture(scope="module")
def slow_server() -> Iterator[RunningServer]:
    with run_server(create_app(SlowGuessEnv)) as running:
        yield running


@pytest.fixture(autouse=True)
def no_leaked_sessions(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test must leave its servers with no open session."""
    yield
    for name in ("server", "slow_server"):
        if name in request.fixturenames:
            running: RunningServer = request.getfixturevalue(name)
            running.wait_for_sessions(0)


def secret_for(seed: int) -> int:
    return random.Random(seed).randint(1, 100)


async def ask(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(frame))
    reply = json.loads(await asyncio.wait_for(ws.recv(), 10.0))
    if "id" in frame:
        assert reply.get("id") == frame["id"], (frame, reply)
    return reply


def guess_frame(n: int, request_id: Any = None) -> dict[str, Any]:
    frame: dict[str, Any] = {
        "type": "step",
        "data": {"type": "call_tool", "tool_name": "guess", "arguments": {"n": n}},
    }
    if request_id is not None:
        frame["id"] = request_id
    return frame


async def health(server: RunningServer) -> dict[str, Any]:
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{server.url}/health", timeout=5.0)
        return response.json()


# -- raw WebSocket ---------------------------------------------------------------------------------


async def test_full_episode_over_raw_websockets(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        first = await ask(ws, {"type": "reset", "id": 0, "data": {"seed": 11, "episode_id": "raw"}})
        assert first["type"] == "observation" and first["data"]["done"] is False
        low, high, steps = 1, 100, 0
        while True:
            steps += 1
            n = (low + high) // 2
            data = (await ask(ws, guess_frame(n, request_id=steps)))["data"]
            verdict = data["observation"]["result"]["verdict"]
            if verdict == "correct":
                break
            assert data["done"] is False and data["reward"] == -0.01
            low, high = (n + 1, high) if verdict == "higher" else (low, n - 1)
            assert steps < 8, "binary search over 1..100 needs at most 7 guesses"
        assert (data["reward"], data["done"]) == (1.0, True)
        assert n == secret_for(11)
        state = (await ask(ws, {"type": "state"}))["data"]
        assert state["episode_id"] == "raw"
        assert state["step_count"] == steps == len(state["guesses"])
        assert state["solved"] is True


async def test_client_vanishing_mid_step(slow_server: RunningServer) -> None:
    async with connect(slow_server.ws_url) as ws:
        await ask(ws, {"type": "reset", "data": {"episode_id": "vanish"}})
        nap = {"type": "call_tool", "tool_name": "nap", "arguments": {"seconds": 0.5}}
        await ws.send(json.dumps({"type": "step", "data": nap}))
        await await_until(_contains(SlowGuessEnv.napping, "vanish"), what="the slow step to start")
        ws.transport.abort()  # drop the TCP connection: no close frame, no goodbye

    # while the vanished session's step is still running, other clients are served
    async with connect(slow_server.ws_url) as other:
        await ask(other, {"type": "reset", "data": {"seed": 2, "episode_id": "other"}})
        done = (await ask(other, guess_frame(secret_for(2))))["data"]["done"]
        assert done is True
        assert (await ask(other, {"type": "state"}))["data"]["episode_id"] == "other"

    await await_until(
        _sessions_are(slow_server, 0), within=10.0, what="the vanished session to close"
    )
    # the session is forgotten at once; its environment closes in the background once the
    # step still running in it (the nap) returns: closed, not just forgotten
    await await_until(
        _contains(SlowGuessEnv.closed, "vanish"), within=10.0, what="its environment to close"
    )


async def test_client_vanishing_while_idle(slow_server: RunningServer) -> None:
    async with connect(slow_server.ws_url) as ws:
        await ask(ws, {"type": "reset", "data": {"episode_id": "idle-vanish"}})
        assert (await health(slow_server))["sessions"] == 1
        ws.transport.abort()
    await await_until(
        _sessions_are(slow_server, 0), within=10.0, what="the dropped session to close"
    )
    await await_until(
        _contains(SlowGuessEnv.closed, "idle-vanish"), within=10.0, what="its environment to close"
    )


def _contains(collection: Any, item: Any) -> Any:
    async def check() -> bool:
        return item in collection

    return check


def _sessions_are(server: RunningServer, n: int) -> Any:
    async def check() -> bool:
        return (await health(server))["sessions"] == n

    return check


async def test_200_concurrent_sessions_each_see_only_their_own_state(server: RunningServer) -> None:
    n_sessions = 200
    all_connected = asyncio.Barrier(n_sessions + 1)
    may_finish = asyncio.Event()

    async def play(i: int) -> dict[str, Any]:
        async with connect(server.ws_url, open_timeout=30) as ws:
            first = await ask(
                ws, {"type": "reset", "id": f"r{i}", "data": {"seed": i, "episode_id": f"ep-{i}"}}
            )
            assert first["type"] == "observation", first
            await all_connected.wait()
            mine = [1 + i % 50, 51 + i % 50]  # two guesses that differ between neighbours
            for k, n in enumerate(mine):
                data = (await ask(ws, guess_frame(n, request_id=f"{i}-{k}")))["data"]
                secret = secret_for(i)
                expected = "correct" if n == secret else ("higher" if secret > n else "lower")
                assert data["observation"]["result"]["verdict"] == expected
                if expected == "correct":
                    mine = mine[: k + 1]
                    break
            await may_finish.wait()
            state = (await ask(ws, {"type": "state", "id": f"s{i}"}))["data"]
            return {"i": i, "state": state, "guesses": mine}

    tasks = [asyncio.ensure_future(play(i)) for i in range(n_sessions)]
    try:
        await asyncio.wait_for(all_connected.wait(), 60.0)
        assert (await health(server))["sessions"] == n_sessions  # all truly concurrent
        may_finish.set()
        results = await asyncio.wait_for(asyncio.gather(*tasks), 60.0)
    finally:
        for task in tasks:
            task.cancel()
    for result in results:
        i, state = result["i"], result["state"]
        assert state["episode_id"] == f"ep-{i}"
        assert state["guesses"] == result["guesses"]
        assert state["step_count"] == len(result["guesses"])
    await await_until(_sessions_are(server, 0), within=15.0, what="every session to close")


# -- HTTP over the socket --------------------------------------------------------------------------


def test_http_reset_and_step(server: RunningServer) -> None:
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        assert client.get("/health").json()["status"] == "healthy"
        reset = client.post("/reset", json={"seed": 4, "low": 1, "high": 10})
        assert reset.status_code == 200
        assert (
            reset.json()["observation"]["metadata"]["prompt"]
            == "Guess the integer between 1 and 10."
        )
        secret = random.Random(4).randint(1, 10)
        action = {"type": "call_tool", "tool_name": "guess", "arguments": {"n": secret}}
        step = client.post(
            "/step", json={"action": action, "reset": {"seed": 4, "low": 1, "high": 10}}
        )
        assert step.status_code == 200
        body = step.json()
        assert body["observation"]["result"]["verdict"] == "correct"
        assert (body["reward"], body["done"]) == (1.0, True)
        bad = client.post("/step", content=b"{oops", headers={"content-type": "application/json"})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "INVALID_JSON"


# -- EnvClient -------------------------------------------------------------------------------------


def _next_guess(low: int, high: int) -> int:
    return (low + high) // 2


def _narrow(obs: CallToolObservation, n: int, low: int, high: int) -> tuple[int, int]:
    assert obs.error is None, obs.error
    verdict = obs.result["verdict"]
    return (n + 1, high) if verdict == "higher" else (low, n - 1)


async def test_env_client_async_episode(server: RunningServer) -> None:
    async with EnvClient.for_env(GuessEnv, server.url, timeout=10.0) as env:
        first = await env.reset(seed=21, episode_id="async-client")
        assert first.done is False and "between 1 and 100" in first.observation.metadata["prompt"]
        tools = await env.list_tools()
        assert {t.name for t in tools} == {"guess", "hint"}
        low, high = 1, 100
        for _ in range(7):
            n = _next_guess(low, high)
            obs = await env.call_tool("guess", n=n)
            if obs.done:
                break
            assert obs.reward == -0.01
            low, high = _narrow(obs, n, low, high)
        assert obs.result == {"verdict": "correct", "guesses": obs.result["guesses"]}
        assert (obs.reward, obs.done) == (1.0, True)
        assert n == secret_for(21)
        state = await env.state()
        assert isinstance(state, GuessState)
        assert state.episode_id == "async-client" and state.solved is True
        assert state.step_count == len(state.guesses) + 1  # list_tools counted as a step


def test_env_client_sync_episode(server: RunningServer) -> None:
    client = EnvClient.for_env(GuessEnv, server.url, timeout=10.0).sync()
    assert isinstance(client, SyncEnvClient)
    with client as env:
        env.reset(seed=22, episode_id="sync-client")
        low, high = 1, 100
        for _ in range(7):
            n = _next_guess(low, high)
            obs = env.call_tool("guess", n=n)
            if obs.done:
                break
            low, high = _narrow(obs, n, low, high)
        assert (obs.result["verdict"], obs.reward, obs.done) == ("correct", 1.0, True)
        assert n == secret_for(22)
        state = env.state()
        assert isinstance(state, GuessState) and state.solved and state.episode_id == "sync-client"
    wait_until(lambda: server.health()["sessions"] == 0, what="the sync client's session to close")


async def test_generic_client_episode(server: RunningServer) -> None:
    async with GenericEnvClient(server.url, timeout=10.0) as env:
        await env.reset(seed=23)
        result = await env.step(
            {"type": "call_tool", "tool_name": "guess", "arguments": {"n": secret_for(23)}}
        )
        assert result.observation["result"]["verdict"] == "correct"
        assert (result.reward, result.done) == (1.0, True)
        assert (await env.state())["solved"] is True
