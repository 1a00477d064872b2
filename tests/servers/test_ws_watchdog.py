"""The `/ws` disconnect watchdog: a client that leaves during a long call gets that call cancelled
(async) or detached (sync, in the pool), for every connection at once; a frame sent during a
long call is answered after it, in order; the watch works again after it went idle.

One timer per event loop watches every call in flight (servers/sim/ws.py `_Watchdog`), instead
of one timer per frame; these tests pin what that timer must still do.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from helpers.server import RunningServer, run_server
from helpers.wait import await_until, wait_until
from mcpgym import MCPEnvironment, tool
from mcpgym.servers import create_app

CANCELLED: list[str] = []
RELEASE = threading.Event()
STARTED: list[str] = []


class SlowEnv(MCPEnvironment):
    """An async tool that waits until cancelled, a sync one that blocks a worker thread."""

    @tool
    async def wait(self, label: str, seconds: float = 3600.0) -> str:
        """Wait `seconds` (or until cancelled)."""
        STARTED.append(label)
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            CANCELLED.append(label)
            raise
        return label

    @tool
    def block(self, label: str) -> str:
        """Block a worker thread until the test releases it."""
        STARTED.append(label)
        RELEASE.wait(30)
        return label


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    with run_server(create_app(SlowEnv)) as running:
        try:
            yield running
        finally:
            RELEASE.set()


def frame(tool: str, request_id: int, **args: Any) -> str:
    data = {"type": "call_tool", "tool_name": tool, "arguments": args}
    return json.dumps({"type": "step", "id": request_id, "data": data})


async def opened(server: RunningServer) -> ClientConnection:
    ws = await connect(server.ws_url)
    await ws.send(json.dumps({"type": "reset"}))
    await ws.recv()
    return ws


async def test_every_departed_clients_async_call_is_cancelled(server: RunningServer) -> None:
    labels = [f"async-{i}" for i in range(25)]
    sockets = [await opened(server) for _ in labels]
    for ws, label in zip(sockets, labels, strict=True):
        await ws.send(frame("wait", 1, label=label))
    await await_until(
        lambda: asyncio.sleep(0, set(labels) <= set(STARTED)), what="every call started"
    )
    for ws in sockets:
        await ws.close()
    await await_until(
        lambda: asyncio.sleep(0, set(labels) <= set(CANCELLED)), within=10, what="all cancelled"
    )
    server.wait_for_sessions(0)


async def test_a_departed_clients_sync_call_is_detached(server: RunningServer) -> None:
    ws = await opened(server)
    await ws.send(frame("block", 1, label="sync-1"))
    await await_until(lambda: asyncio.sleep(0, "sync-1" in STARTED), what="the call started")
    await ws.close()
    # the session ends although its thread is still blocked: the call was detached
    wait_until(lambda: server.health()["sessions"] == 0, timeout=10, what="the session closed")
    assert server.health()["workers"]["detached"] >= 1


async def test_a_frame_sent_during_a_long_call_is_answered_after_it(server: RunningServer) -> None:
    async with connect(server.ws_url) as ws:
        await ws.send(json.dumps({"type": "reset"}))
        await ws.recv()
        await ws.send(frame("wait", 1, label="long-1", seconds=0.3))
        await await_until(lambda: asyncio.sleep(0, "long-1" in STARTED), what="the call started")
        await ws.send(frame("wait", 2, label="short-2", seconds=0.0))
        first = json.loads(await asyncio.wait_for(ws.recv(), 10))
        second = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert (first["id"], second["id"]) == (1, 2)
        assert first["data"]["observation"]["result"] == "long-1"
        assert second["data"]["observation"]["result"] == "short-2"
        assert "long-1" not in CANCELLED


async def test_the_watch_resumes_after_going_idle(server: RunningServer) -> None:
    from mcpgym.servers.sim.ws import _Watchdog  # pyright: ignore[reportPrivateUsage]

    ws = await opened(server)
    every = _Watchdog._by_loop.values()  # pyright: ignore[reportPrivateUsage]
    dogs = [d for d in every if d.loop.is_running()]  # this server's (others have stopped)
    assert dogs, "a frame was handled, so the server's loop has a watchdog"
    # no call in flight: the timer stops, and a later call must start it again
    wait_until(lambda: not any(d.running for d in dogs), what="the watchdog went idle")
    await ws.send(frame("wait", 1, label="after-idle"))
    await await_until(lambda: asyncio.sleep(0, "after-idle" in STARTED), what="the call started")
    await ws.close()
    await await_until(
        lambda: asyncio.sleep(0, "after-idle" in CANCELLED), within=10, what="cancelled"
    )
