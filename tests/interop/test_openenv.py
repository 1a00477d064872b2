"""The released `openenv==0.10.0` client drives an mcpgym server (its own virtual environment)."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

import pytest

from helpers.compat import OPENENV_CLIENT, compat
from helpers.server import run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

DRIVER = Path(__file__).with_name("openenv_driver.py")


def _drive(python: Path, url: str, actions: list[dict], reset: dict) -> list[dict]:
    proc = subprocess.run(
        [str(python), str(DRIVER), url, json.dumps(actions), json.dumps(reset)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0, f"openenv client failed: {rows[-1:] or proc.stderr[-2000:]}"
    return rows


@compat(
    OPENENV_CLIENT,
    "GenericEnvClient",
    "works",
    "plays a Guess episode over /ws: reset, steps, rewards, done, state",
)
def test_openenv_generic_client_plays_an_episode(openenv_python: Path) -> None:
    actions = [
        {"type": "list_tools"},
        {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 50}},
        {"type": "call_tool", "tool_name": "guess", "arguments": {"n": "not a number"}},
        {"type": "call_tool", "tool_name": "hint", "arguments": {}},
    ]
    with run_server(create_app(GuessEnv)) as server:
        rows = _drive(openenv_python, server.url, actions, {"seed": 3, "episode_id": "oe-1"})
        server.wait_for_sessions(0)
    reset, listed, guess, bad, hint, state = rows
    assert reset["op"] == "reset" and reset["done"] is False
    assert sorted(t["name"] for t in listed["observation"]["tools"]) == ["guess", "hint"]
    assert guess["observation"]["tool_name"] == "guess"
    assert guess["observation"]["result"]["verdict"] in {"higher", "lower", "correct"}
    assert guess["reward"] in (-0.01, 1.0)
    assert bad["observation"]["error"]["error_type"] == "invalid_args"
    assert isinstance(hint["observation"]["result"], int)
    assert state["state"]["episode_id"] == "oe-1"
    assert state["state"]["step_count"] == 4
    assert state["state"]["guesses"] == [50]


@compat(
    OPENENV_CLIENT,
    "GenericEnvClient",
    "works",
    "bad actions and tool failures arrive as structured errors it reads",
)
def test_openenv_client_sees_structured_errors(openenv_python: Path) -> None:
    """An invalid action is a VALIDATION_ERROR the openenv client reports, not a crash."""
    with run_server(create_app(GuessEnv)) as server:
        proc = subprocess.run(
            [str(openenv_python), str(DRIVER), server.url, json.dumps([{"type": "jump"}]), "{}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 1
        last = json.loads(proc.stdout.splitlines()[-1])
        assert last["op"] == "step0" and "VALIDATION_ERROR" in last["error"]
        server.wait_for_sessions(0)
        assert server.health()["status"] == "healthy"


def test_driver_imports_no_mcpgym() -> None:
    """The driver proves the foreign client alone speaks our protocol: it must not use mcpgym."""
    tree = ast.parse(DRIVER.read_text())
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m.split(".")[0] == "mcpgym" for m in modules)
    assert "openenv.core" in modules
