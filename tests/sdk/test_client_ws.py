"""The clients against a tiny scripted WebSocket server that plays the `/ws` protocol.

Every scenario runs for both twins: the async `EnvClient` directly, the `SyncEnvClient` in a worker
thread (the fake server lives on the test's event loop, which a blocking call would stall).
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from mcpgym.client import EnvClient, GenericEnvClient, SyncEnvClient, SyncGenericEnvClient
from mcpgym.errors import ClientError, RemoteError, RequestTimeout, ServerGone
from mcpgym.examples.guess import GuessEnv, GuessState
from mcpgym.types import CallToolObservation, ListToolsObservation, Observation

TOOLS = [{"name": "guess", "description": "Guess.", "input_schema": {"type": "object"}}]


class FakeServer:
    """Answers frames like an mcpgym server; the step action's `type` picks a scripted behaviour."""

    def __init__(self) -> None:
        self.url = ""
        self.received: list[dict[str, Any]] = []
        self.saw_close = asyncio.Event()
        self.step_count = 0
        self._held: dict[str, Any] | None = None  # a reply withheld until the next request

    async def handler(self, ws: ServerConnection) -> None:
        try:
            async for text in ws:
                msg = json.loads(text)
                self.received.append(msg)
                if self._held is not None:  # arrives after the client gave up: must be dropped
                    await ws.send(json.dumps(self._held))
                    self._held = None
                if msg["type"] == "close":
                    self.saw_close.set()
                    await ws.close()
                    return
                await self.answer(ws, msg)
        except ConnectionClosed:
            pass

    async def answer(self, ws: ServerConnection, msg: dict[str, Any]) -> None:
        rid = msg.get("id")

        async def send(type_: str, data: dict[str, Any], id_: Any = rid) -> None:
            await ws.send(json.dumps({"type": type_, "data": data, "id": id_}))

        def observation(obs: dict[str, Any], reward: float | None = None, done: bool = False):
            return {"observation": obs, "reward": reward, "done": done}

        kind, data = msg["type"], msg.get("data") or {}
        if kind == "reset":
            self.step_count = 0
            await send("observation", observation({"metadata": {"seed": data.get("seed")}}))
        elif kind == "state":
            await send("state", {"episode_id": "e1", "step_count": self.step_count, "guesses": []})
        elif kind == "mcp":
            await send("mcp", {"jsonrpc": "2.0", "id": data["id"], "result": {"tools": TOOLS}})
        elif kind != "step":
            await send("error", {"code": "UNKNOWN_TYPE", "message": f"unknown type {kind!r}"})
        else:
            self.step_count += 1
            action = data.get("type")
            if action == "list_tools":
                await send("observation", observation({"tools": TOOLS}))
            elif action == "call_tool" and data["tool_name"] == "guess":
                n = data["arguments"]["n"]
                result = {"verdict": "correct" if n == 42 else "higher"}
                obs = {"tool_name": "guess", "result": result, "error": None}
                await send("observation", observation(obs, 1.0 if n == 42 else -0.01, n == 42))
            elif action == "call_tool" and data["tool_name"] == "big":
                obs = {"tool_name": "big", "result": "x" * 2_000_000, "error": None}
                await send("observation", observation(obs))
            elif action == "call_tool":
                error = {"error_type": "tool_not_found", "message": "Unknown tool", "tool": "x"}
                obs = {"tool_name": data["tool_name"], "result": None, "error": error}
                await send("observation", observation(obs, -0.1))
            elif action == "boom":
                error = {"code": "EXECUTION_ERROR", "message": "raised", "exception": "KeyError"}
                await send("error", error)
            elif action == "noisy":  # a frame for some other request first
                await send("observation", observation({"metadata": {"which": "wrong"}}), "bogus")
                await send("observation", observation({"metadata": {"which": "right"}}))
            elif action == "slow":
                self._held = {"type": "observation", "id": rid, "data": observation({})}
            elif action == "hangup":
                await ws.close(1011, "environment crashed")
            # "silent": never answer


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    fake = FakeServer()
    async with serve(fake.handler, "127.0.0.1", 0) as srv:
        fake.url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
        yield fake


class Threaded:
    """Drives a blocking client from an async test: each call runs in a worker thread."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        method = getattr(self.client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            result = await asyncio.to_thread(method, *args, **kwargs)
            return self if result is self.client else result

        return call


Factory = Callable[..., Any]


@pytest.fixture(params=["async", "sync"])
async def new_client(request: pytest.FixtureRequest) -> AsyncIterator[Factory]:
    """`new_client(url, **kw)` → a client of the parametrised flavour, closed after the test."""
    made: list[Any] = []

    def make(url: str, *, generic: bool = False, **kwargs: Any) -> Any:
        if request.param == "async":
            client: Any = (GenericEnvClient if generic else EnvClient)(url, **kwargs)
        else:
            client = Threaded((SyncGenericEnvClient if generic else SyncEnvClient)(url, **kwargs))
        made.append(client)
        return client

    yield make
    for client in made:
        await client.close()


async def test_happy_path(server: FakeServer, new_client: Factory) -> None:
    env = await new_client(server.url, state_type=GuessState).connect()
    first = await env.reset(seed=7, episode_id="e1")
    assert type(first.observation) is Observation
    assert first.observation.metadata == {"seed": 7}
    assert (first.reward, first.done) == (None, False)

    assert [t.name for t in await env.list_tools()] == ["guess"]
    miss = await env.call_tool("guess", n=5)
    assert isinstance(miss, CallToolObservation)
    assert (miss.result, miss.error) == ({"verdict": "higher"}, None)
    assert (miss.reward, miss.done) == (-0.01, False)
    hit = await env.step({"type": "call_tool", "tool_name": "guess", "arguments": {"n": 42}})
    assert isinstance(hit.observation, CallToolObservation)
    assert (hit.reward, hit.done, hit.observation.done) == (1.0, True, True)
    unknown = await env.call_tool("nope", {"a": 1})
    assert unknown.error is not None and unknown.error.error_type == "tool_not_found"

    state = await env.state()
    assert isinstance(state, GuessState) and state.step_count == 4
    reply = await env.mcp({"id": 9, "method": "tools/list"})
    assert reply["id"] == 9 and reply["result"]["tools"][0]["name"] == "guess"

    await env.close()
    await env.close()  # idempotent
    await asyncio.wait_for(server.saw_close.wait(), 5)
    ids = [m["id"] for m in server.received]
    assert len(set(ids)) == len(ids)
    assert server.received[0]["data"] == {"seed": 7, "episode_id": "e1"}
    with pytest.raises(ClientError, match="closed"):
        await env.state()


async def test_context_manager_and_for_env(server: FakeServer) -> None:
    async with EnvClient.for_env(GuessEnv, server.url) as env:
        await env.reset()
        assert isinstance(await env.state(), GuessState)
        listed = await env.step({"type": "list_tools"})
        assert isinstance(listed.observation, ListToolsObservation)
    await asyncio.wait_for(server.saw_close.wait(), 5)

    def blocking() -> None:
        with SyncEnvClient.for_env(GuessEnv, server.url) as sync_env:
            sync_env.reset()
            assert isinstance(sync_env.state(), GuessState)

    await asyncio.to_thread(blocking)


async def test_sync_twin_keeps_the_configuration() -> None:
    env = EnvClient("https://h:1/", state_type=GuessState, timeout=3.0, headers={"X": "y"})
    twin = env.sync()
    assert isinstance(twin, SyncEnvClient)
    assert twin.url == env.url == "wss://h:1/ws"
    assert twin._core.state_type is GuessState and twin._core.timeout == 3.0
    assert twin._transport.headers == {"X": "y"}
    assert isinstance(GenericEnvClient("h:1").sync(), SyncGenericEnvClient)


async def test_large_frames_are_accepted(server: FakeServer, new_client: Factory) -> None:
    env = new_client(server.url)
    await env.reset()
    obs = await env.call_tool("big")  # 2 MB: beyond websockets' 1 MiB default
    assert len(obs.result) == 2_000_000


async def test_error_frame_raises_remote_error(server: FakeServer, new_client: Factory) -> None:
    env = new_client(server.url)
    await env.reset()
    with pytest.raises(RemoteError) as info:
        await env.step({"type": "boom"})
    assert info.value.remote_code == "EXECUTION_ERROR"
    assert info.value.detail == {"exception": "KeyError"}
    assert (await env.state()).step_count == 1  # the session survives a remote error


async def test_no_answer_times_out(server: FakeServer, new_client: Factory) -> None:
    env = new_client(server.url, timeout=0.2)
    await env.reset()
    with pytest.raises(RequestTimeout, match="'step'"):
        await env.step({"type": "silent"})
    assert (await env.state()).step_count == 1  # the connection stays usable


async def test_late_reply_after_timeout_is_discarded(server: FakeServer, new_client: Factory):
    env = new_client(server.url, timeout=0.2)
    await env.reset()
    with pytest.raises(RequestTimeout):
        await env.step({"type": "slow"})
    # the server now sends the late observation first; state() must skip it
    state = await env.state()
    assert state.episode_id == "e1"


async def test_reply_with_wrong_id_is_discarded(server: FakeServer, new_client: Factory) -> None:
    env = new_client(server.url)
    await env.reset()
    result = await env.step({"type": "noisy"})
    assert result.observation.metadata == {"which": "right"}


async def test_server_closing_mid_request(server: FakeServer, new_client: Factory) -> None:
    env = new_client(server.url)
    await env.reset()
    with pytest.raises(ServerGone, match=r"ws://127\.0\.0\.1:\d+/ws closed the connection"):
        await env.step({"type": "hangup"})
    with pytest.raises(ServerGone, match="call connect"):
        await env.state()
    await env.connect()  # an explicit new session
    assert (await env.reset()).done is False


async def test_nothing_listening(new_client: Factory) -> None:
    with socket.socket() as sock:  # bound but not listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        env = new_client(f"http://127.0.0.1:{port}")
        with pytest.raises(ServerGone, match=f"cannot connect to ws://127.0.0.1:{port}/ws"):
            await env.reset()


async def test_capacity_error_before_close_is_delivered(new_client: Factory) -> None:
    async def full(ws: ServerConnection) -> None:
        data = {"code": "CAPACITY_REACHED", "message": "server full", "capacity": 1}
        await ws.send(json.dumps({"type": "error", "data": data}))
        await ws.close(1013, "try again later")

    async with serve(full, "127.0.0.1", 0) as srv:
        env = new_client(f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}")
        with pytest.raises(RemoteError) as info:
            await env.reset()
        assert info.value.remote_code == "CAPACITY_REACHED"
        assert info.value.detail == {"capacity": 1}


async def test_handshake_headers_and_rejection(server: FakeServer, new_client: Factory) -> None:
    def check_token(conn: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Authorization") != "Bearer s3cret":
            return conn.respond(403, "missing token\n")
        return None

    async with serve(server.handler, "127.0.0.1", 0, process_request=check_token) as srv:
        url = f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}"
        with pytest.raises(RemoteError) as info:
            await new_client(url).reset()
        assert info.value.remote_code == "UNAUTHORIZED"
        authorised = new_client(url, headers={"Authorization": "Bearer s3cret"})
        assert (await authorised.reset(seed=1)).observation.metadata == {"seed": 1}


async def test_generic_clients_speak_dicts(server: FakeServer, new_client: Factory) -> None:
    env = new_client(server.url, generic=True)
    first = await env.reset(seed=3)
    assert first.observation == {"metadata": {"seed": 3}}
    assert [t["name"] for t in await env.list_tools()] == ["guess"]
    hit = await env.call_tool("guess", n=42)
    assert hit.observation["result"] == {"verdict": "correct"}
    assert (hit.reward, hit.done) == (1.0, True)
    step = await env.step({"type": "call_tool", "tool_name": "x", "arguments": {}})
    assert step.observation["error"]["error_type"] == "tool_not_found"
    state = await env.state()
    assert state == {"episode_id": "e1", "step_count": 3, "guesses": []}
    assert (await env.mcp({"id": 1, "method": "tools/list"}))["id"] == 1
    with pytest.raises(RemoteError):
        await env.step({"type": "boom"})
