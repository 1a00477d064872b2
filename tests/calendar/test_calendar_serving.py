"""Calendar Gym behind the real server app (in-process): reset options and structured errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from calendar_gym import CALENDAR_IDS, CalendarEnv
from mcpgym.servers import create_app

WHEN = {
    "start": {"dateTime": "2026-03-05T10:00:00-05:00"},
    "end": {"dateTime": "2026-03-05T11:00:00-05:00"},
}


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(CalendarEnv), raise_server_exceptions=False) as c:
        yield c


def test_ws_episode_with_reset_options(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"seed": 3, "user": "bob@acme.test"}})
        reply = ws.receive_json()
        assert reply["type"] == "observation"
        assert reply["data"]["observation"]["metadata"]["user"] == "bob@acme.test"
        step = {
            "type": "call_tool",
            "tool_name": "events_insert",
            "arguments": {"calendarId": CALENDAR_IDS["marketing"], "summary": "x", **WHEN},
        }
        ws.send_json({"type": "step", "data": step})
        obs = ws.receive_json()["data"]["observation"]
        assert obs["error"]["error_type"] == "execution_error"
        assert obs["error"]["error"]["code"] == "PERMISSION_DENIED"
        ws.send_json({"type": "state"})
        state = ws.receive_json()["data"]
        assert (state["user"], state["calls"], state["errors"]) == ("bob@acme.test", 1, 1)


def test_ws_bad_reset_option_is_a_validation_error(client: TestClient) -> None:
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"user": "nobody@acme.test"}})
        reply = ws.receive_json()
        assert reply["type"] == "error"
        assert reply["data"]["code"] == "VALIDATION_ERROR"
        assert "not in the world" in reply["data"]["message"]


def test_production_app_starts_its_shared_world() -> None:
    with TestClient(create_app(CalendarEnv, mode="production")) as c:
        assert c.get("/health").json()["status"] == "healthy"
