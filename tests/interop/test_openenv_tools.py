"""OpenEnv 0.10.0's `MCPToolClient` and a typed `EnvClient` subclass drive mcpgym servers unchanged.

The clients run under the openenv virtual environment's Python (tests/interop/
openenv_tools_driver.py); the servers are mcpgym's GuessEnv and Calendar Gym on a real uvicorn.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calendar_gym import CalendarEnv
from helpers.compat import OPENENV_CLIENT, compat
from helpers.openenv import run_driver
from helpers.server import run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

GUESS_CALLS = [
    ["guess", {"n": 50}],
    ["hint", {}],
    ["leaderboard", {}],
    ["no_such_tool", {}],
]


def _tools(python: Path, url: str, calls: list, token: str | None = None) -> dict[str, dict]:
    args = [url, json.dumps(calls)] + ([token] if token else [])
    code, rows, stderr = run_driver(python, "openenv_tools_driver.py", "tools", *args)
    assert code == 0, f"openenv MCPToolClient failed: {rows[-1:] or stderr}"
    return {row["op"]: row for row in rows}


@compat(
    OPENENV_CLIENT,
    "MCPToolClient",
    "works",
    "lists and calls Guess's tools in both modes",
)
@pytest.mark.parametrize("mode", ["simulation", "production"])
def test_mcp_tool_client_on_guess(openenv_python: Path, mode: str) -> None:
    """Same tools and mode tags as every other transport; failures raise as OpenEnv's own do."""
    with run_server(create_app(GuessEnv, mode=mode)) as server:
        got = _tools(openenv_python, server.url, GUESS_CALLS)
        server.wait_for_sessions(0)  # openenv/session/close ended the session
    visible = {"simulation": ["guess", "hint"], "production": ["guess", "leaderboard"]}[mode]
    assert got["list_tools"]["tools"] == visible
    assert got["call:guess"]["result"]["verdict"] in {"higher", "lower", "correct"}
    assert got["call:guess"]["result"]["guesses"] == 1
    failures = [row for op, row in got.items() if op.startswith("call:") and "raised" in row]
    hidden = "leaderboard" if mode == "simulation" else "hint"
    assert {row["op"] for row in failures} >= {f"call:{hidden}", "call:no_such_tool"}
    assert "Unknown tool" in got[f"call:{hidden}"]["raised"]
    assert "closed" in got


@compat(
    OPENENV_CLIENT,
    "MCPToolClient",
    "works",
    "bad arguments and business errors raise its own RuntimeError carrying mcpgym's message",
)
def test_mcp_tool_client_failures_say_why(openenv_python: Path) -> None:
    """Bad arguments and business errors raise OpenEnv's `RuntimeError` with our message."""
    cases = [({"n": "x"}, "(n)"), ({}, "(n)"), ({"n": 500}, "outside"), ({"n": 1, "m": 2}, "(m)")]
    calls = [["guess", arguments] for arguments, _ in cases]
    with run_server(create_app(GuessEnv)) as server:
        args = [server.url, json.dumps(calls)]
        code, rows, stderr = run_driver(openenv_python, "openenv_tools_driver.py", "tools", *args)
    assert code == 0, rows[-1:] or stderr
    raised = [row["raised"] for row in rows if row["op"] == "call:guess"]
    assert len(raised) == len(cases)
    for text, (_, says) in zip(raised, cases, strict=True):
        assert text.startswith("Tool 'guess' failed: ") and says in text, text


@compat(
    OPENENV_CLIENT,
    "MCPToolClient",
    "refused",
    "without the bearer token of a production server it cannot open a session (401)",
)
def test_mcp_tool_client_needs_the_token(openenv_python: Path) -> None:
    """Auth is /mcp's: without the bearer token the client cannot open a session."""
    with run_server(create_app(GuessEnv, mode="production", token="s3cret")) as server:
        code, rows, _ = run_driver(
            openenv_python, "openenv_tools_driver.py", "tools", server.url, "[]"
        )
        assert code == 1 and rows[-1]["op"] == "connect"
        assert "401" in rows[-1]["error"]
        got = _tools(openenv_python, server.url, [["guess", {"n": 1}]], token="s3cret")
    assert got["list_tools"]["tools"] == ["guess", "leaderboard"]
    assert "result" in got["call:guess"]


@compat(
    OPENENV_CLIENT,
    "MCPToolClient",
    "works",
    "Calendar Gym in production mode: tools listed and called",
)
def test_mcp_tool_client_on_calendar_gym_production(openenv_python: Path) -> None:
    """Each principal's token reaches its own production instance through OpenEnv's client."""
    principals = {"tok-alice": {"user": "alice@acme.test"}, "tok-bob": {"user": "bob@acme.test"}}
    app = create_app(CalendarEnv, mode="production", principals=principals)
    calls = [["calendarList_list", {}], ["events_list", {"calendarId": "nobody@nowhere.test"}]]
    with run_server(app) as server:
        alice = _tools(openenv_python, server.url, calls, token="tok-alice")
        bob = _tools(openenv_python, server.url, calls, token="tok-bob")
    assert "finish" not in alice["list_tools"]["tools"]  # simulation-only tool
    assert "events_insert" in alice["list_tools"]["tools"]
    first = {"alice": alice, "bob": bob}
    for user, got in first.items():
        items = got["call:calendarList_list"]["result"]["items"]
        assert f"{user}@acme.test" in [item["id"] for item in items]
    assert "raised" in alice["call:events_list"]  # a business error is OpenEnv's tool failure


@compat(
    OPENENV_CLIENT,
    "typed EnvClient subclass",
    "works",
    "plays Guess with its own action and observation classes",
)
def test_typed_env_client_plays_guess(openenv_python: Path) -> None:
    """An `EnvClient` subclass with only `_step_payload`/`_parse_result`/`_parse_state`."""
    actions = [
        {"tool_name": "guess", "arguments": {"n": 50}},
        {"tool_name": "guess", "arguments": {"n": 25}},
        {"tool_name": "guess", "arguments": {"n": "x"}},
    ]
    with run_server(create_app(GuessEnv)) as server:
        code, rows, stderr = run_driver(
            openenv_python,
            "openenv_tools_driver.py",
            "typed",
            server.url,
            json.dumps(actions),
            json.dumps({"seed": 3, "episode_id": "typed-1"}),
        )
        server.wait_for_sessions(0)
    assert code == 0, rows[-1:] or stderr
    reset, one, two, bad, state = rows
    assert reset["type"] == "GuessObservation" and reset["done"] is False
    assert one["tool_name"] == "guess" and one["result"]["verdict"] in {"higher", "lower"}
    assert one["reward"] == -0.01 and two["result"]["guesses"] == 2
    assert bad["error"]["error_type"] == "invalid_args" and bad["result"] is None
    assert state == {"op": "state", "type": "State", "episode_id": "typed-1", "step_count": 3}


@compat(
    OPENENV_CLIENT,
    "typed EnvClient subclass",
    "works",
    "plays Calendar Gym tool steps with its own classes",
)
def test_typed_env_client_on_calendar_gym(openenv_python: Path) -> None:
    actions = [{"tool_name": "calendarList_list", "arguments": {}}]
    with run_server(create_app(CalendarEnv)) as server:
        code, rows, stderr = run_driver(
            openenv_python,
            "openenv_tools_driver.py",
            "typed",
            server.url,
            json.dumps(actions),
            json.dumps({"seed": 1, "user": "bob@acme.test"}),
        )
    assert code == 0, rows[-1:] or stderr
    listed = rows[1]
    assert "bob@acme.test" in [item["id"] for item in listed["result"]["items"]]
