"""The per-session memory budget (`--session-memory-mb`): a session whose environment holds more
than its budget is ended with a clear reason (close code 4003 on `/ws`) while the other sessions
carry on; what sessions share is charged to none of them; an environment's own report of memory
outside Python objects (`memory_bytes()`) counts."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from helpers.server import run_server
from mcpgym import MCPEnvironment, tool
from mcpgym.servers import create_app
from mcpgym.servers.guards.memory_guard import held_bytes
from mcpgym.servers.settings import ServerSettings

pytestmark = [pytest.mark.server, pytest.mark.timeout(120)]


class HoardEnv(MCPEnvironment):
    """`hoard` keeps `mib` MiB per call; `ping` answers."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[bytearray] = []

    @tool
    def hoard(self, mib: int) -> int:
        """Keep `mib` more MiB."""
        self.kept.append(bytearray(mib << 20))
        return len(self.kept)

    @tool
    def ping(self) -> str:
        """Answer."""
        return "pong"


def _step(ws: Any, name: str, **arguments: Any) -> dict[str, Any]:
    call = {"type": "call_tool", "tool_name": name, "arguments": arguments}
    ws.send(json.dumps({"type": "step", "data": call}))
    return json.loads(ws.recv(timeout=30))


def test_the_session_over_its_budget_ends_and_the_others_live() -> None:
    app = create_app(HoardEnv, settings=ServerSettings(session_memory_mb=48))
    with run_server(app) as server:
        with connect(server.ws_url) as hog, connect(server.ws_url) as other:
            for ws in (hog, other):
                ws.send(json.dumps({"type": "reset"}))
                ws.recv(timeout=30)
            assert _step(other, "hoard", mib=8)["type"] == "observation"  # within its budget
            with pytest.raises(ConnectionClosed) as info:
                for _ in range(20):
                    _step(hog, "hoard", mib=16)
                    time.sleep(0.3)
            assert info.value.rcvd is not None and info.value.rcvd.code == 4003
            assert "memory budget exceeded" in info.value.rcvd.reason
            assert _step(other, "ping")["data"]["observation"]["result"] == "pong"
        assert server.health()["status"] == "healthy"


class _Env:
    def __init__(self, shared: list[bytes], own: int, reported: int = 0) -> None:
        self.shared = shared
        self.own = bytes(own)
        self.reported = reported

    def memory_bytes(self) -> int:
        return self.reported


def test_what_sessions_share_is_charged_to_none() -> None:
    shared = [bytes(4 << 20)]
    a, b = _Env(shared, 1 << 20), _Env(shared, 2 << 20, reported=3 << 20)
    size_a, size_b = held_bytes([a, b])
    assert (1 << 20) <= size_a < (1 << 20) + 64_000
    assert (5 << 20) <= size_b < (5 << 20) + 64_000
    (alone,) = held_bytes([a])  # one session alone: what it reaches is its own
    assert alone > 5 << 20
