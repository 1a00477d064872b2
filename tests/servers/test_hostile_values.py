"""Values a JSON text can carry but nothing downstream can use: a lone UTF-16 surrogate escape
(no character: it cannot be written as UTF-8, so it failed later, in a reply, a log line, a
file name, Calendar's store) and an integer too large for a float (`timeout_s: 10**400` was an
`OverflowError`). Both are client input: a 4xx or a structured error on every transport, never
a 500, never a crash, nothing created, and the server keeps answering."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from websockets.sync.client import connect

from calendar_gym import CalendarEnv
from helpers.mcp import StdioProcess
from helpers.server import RunningServer, run_server
from mcpgym.errors import InvalidJSON
from mcpgym.runtime.strict_json import loads
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

HUGE = "1" + "0" * 400
CALL_WITH_SURROGATE = (
    '{"action": {"type": "call_tool", "tool_name": "events_list", '
    '"arguments": {"calendarId": "\\ud800"}}}'
)
LONE = ['"\\ud800"', '"\\udfff"', '"a\\uDC00b"', '{"\\ud83d": 1}', '["\\ude00\\ud83d"]']


@pytest.mark.parametrize("text", LONE)
def test_a_lone_surrogate_escape_is_invalid_json(text: str) -> None:
    with pytest.raises(InvalidJSON, match="surrogate"):
        loads(text)


def test_a_surrogate_pair_and_an_escaped_backslash_are_text() -> None:
    assert loads('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}
    assert loads('"\\\\ud800"') == "\\ud800"  # a backslash, then the letters


@pytest.fixture(scope="module")
def served() -> Iterator[RunningServer]:
    with run_server(create_app(CalendarEnv, mode="simulation")) as server:
        yield server


def _post(server: RunningServer, path: str, body: str) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    return httpx.post(f"{server.url}{path}", content=body.encode(), headers=headers, timeout=30)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/reset", '{"user": "\\ud800"}'),
        ("/reset", '{"seed": 1, "episode_id": "\\udc00"}'),
        ("/step", '{"action": {"type": "list_tools"}, "timeout_s": ' + HUGE + "}"),
        ("/step", '{"action": {"type": "list_tools"}, "timeout_s": -' + HUGE + "}"),
        ("/step", '{"action": {"type": "list_tools"}, "timeout_s": 1e308}'),
        ("/step", CALL_WITH_SURROGATE),
        ("/mcp/episodes", '{"reset": {"user": "\\ud800"}}'),
    ],
)
def test_http_answers_4xx_json_and_creates_nothing(
    served: RunningServer, path: str, body: str
) -> None:
    before = served.health()["sessions"]
    reply = _post(served, path, body)
    assert 400 <= reply.status_code < 500, (reply.status_code, reply.text[:300])
    assert reply.headers["content-type"].startswith("application/json")
    assert "error" in reply.json() or "detail" in reply.json()
    assert served.health()["sessions"] == before


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "reset", "data": {"user": "\\ud800"}}',
        '{"type": "step", "data": {"type": "list_tools"}, "timeout_s": ' + HUGE + "}",
    ],
)
def test_ws_answers_a_validation_error_and_keeps_the_session(
    served: RunningServer, frame: str
) -> None:
    with connect(f"ws://127.0.0.1:{served.port}/ws") as ws:
        ws.send(json.dumps({"type": "reset"}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        ws.send(frame)
        error = json.loads(ws.recv(timeout=30))
        assert error["type"] == "error", error
        assert error["data"]["code"] in ("INVALID_JSON", "VALIDATION_ERROR"), error
        ws.send(json.dumps({"type": "step", "data": {"type": "list_tools"}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"


def test_stdio_refuses_a_surrogate_id_and_keeps_serving() -> None:
    proc = StdioProcess("mcpgym.examples.guess:GuessEnv")
    try:
        proc.initialize()
        proc.send('{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list"}')
        reply = proc.receive(timeout=30)
        assert reply["error"]["code"] == -32700, reply
        proc.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        assert proc.receive(timeout=30) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    finally:
        proc.kill()
