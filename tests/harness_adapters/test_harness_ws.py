"""The `/harness` WebSocket: `/ws` frames drive a harness episode; events stream before the
observation; a bearer token is required; closing the connection stops the harness."""

from __future__ import annotations

import json
from typing import Any

import pytest
from harness_envs import CallLogEnv
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from mcpgym.harness.adapters import PythonAdapter, PythonHarnessContext
from mcpgym.harness.hosted.env import HarnessEnvironment
from mcpgym.harness.hosted.routes import add_harness_route, harness_app
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

TOKEN = "harness-secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
built: list[HarnessEnvironment] = []


async def agent(message: str, ctx: PythonHarnessContext) -> str:
    out = await ctx.call_tool("note", {"text": message})
    return f"noted {out.structured['notes']}"


def factory() -> HarnessEnvironment:
    env = HarnessEnvironment(CallLogEnv, PythonAdapter(agent))
    built.append(env)
    return env


def receive(ws: Any) -> dict[str, Any]:
    return json.loads(ws.receive_text())


def test_a_client_plays_a_harness_episode_over_the_websocket() -> None:
    built.clear()
    with (
        TestClient(harness_app(factory, token=TOKEN)) as client,
        client.websocket_connect("/harness", headers=AUTH) as ws,
    ):
        ws.send_text(json.dumps({"type": "reset", "data": {"episode_id": "ws-1"}}))
        reset = receive(ws)
        assert reset["type"] == "observation"
        assert sorted(reset["data"]["observation"]["metadata"]["tools"]) == [
            "add",
            "finish",
            "note",
        ]
        ws.send_text(json.dumps({"type": "step", "data": {"message": "hello"}, "id": 7}))
        frames = [receive(ws)]
        while frames[-1]["type"] == "event":
            frames.append(receive(ws))
        events = [f["data"]["type"] for f in frames[:-1]]
        assert events == ["tool_call", "tool_result", "text", "turn_complete"]
        final = frames[-1]
        assert (final["type"], final["id"]) == ("observation", 7)
        assert final["data"]["observation"]["response"] == "noted 1"
        assert final["data"]["reward"] == 0.1
        ws.send_text(json.dumps({"type": "state"}))
        state = receive(ws)["data"]
        assert (state["episode_id"], state["turns"], state["running"]) == ("ws-1", 1, True)
        ws.send_text(json.dumps({"type": "close"}))
    assert CallLogEnv.calls_of("ws-1") == [("note", {"text": "hello"})]
    (env,) = built
    assert not env.state.running and not env.adapter.alive()  # the connection's end stopped it


def test_the_websocket_requires_the_token() -> None:
    with TestClient(harness_app(factory, token=TOKEN)) as client:
        with pytest.raises(WebSocketDisconnect) as info:
            with client.websocket_connect("/harness") as ws:
                ws.receive_text()
        assert info.value.code == 1008
        assert client.get("/health").json()["status"] == "healthy"


def test_the_route_joins_an_app_from_create_app() -> None:
    built.clear()
    app = create_app(CallLogEnv)
    add_harness_route(app, factory, token=TOKEN)
    with TestClient(app) as client:
        with client.websocket_connect("/harness", headers=AUTH) as ws:
            ws.send_text(json.dumps({"type": "reset", "data": {"episode_id": "ws-app"}}))
            assert receive(ws)["type"] == "observation"
            ws.send_text(json.dumps({"type": "step", "data": {"message": "hi"}}))
            while (frame := receive(ws))["type"] == "event":
                pass
            assert frame["data"]["observation"]["response"] == "noted 1"
        with client.websocket_connect("/ws") as ws:  # the app's own routes still work
            ws.send_text(json.dumps({"type": "reset", "data": {}}))
            assert receive(ws)["type"] == "observation"
    assert CallLogEnv.calls_of("ws-app") == [("note", {"text": "hi"})]
