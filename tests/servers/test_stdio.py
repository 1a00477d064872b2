"""`mcpgym serve MODULE:ATTR --stdio` as a raw subprocess: stdout carries only MCP messages,
prints and logs go to stderr, production tools only, and the process exits when stdin closes."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.mcp import LEGACY, StdioProcess

pytestmark = pytest.mark.server

TESTS = str(Path(__file__).resolve().parents[1])


@pytest.fixture
def guess() -> Iterator[StdioProcess]:
    proc = StdioProcess("mcpgym.examples.guess:GuessEnv")
    try:
        yield proc
    finally:
        proc.kill()


def test_serves_production_tools_and_exits_when_stdin_closes(guess: StdioProcess) -> None:
    started = time.monotonic()
    init = guess.initialize()
    startup = time.monotonic() - started
    # Importing the `mcp` package dominates (~1.5 s idle); a loaded CI machine gets slack.
    assert startup < 20, f"stdio server took {startup:.1f} s to answer initialize"
    assert init["result"]["protocolVersion"] == LEGACY
    assert init["result"]["serverInfo"]["name"] == "GuessEnv"

    listed = guess.request("tools/list", {}, request_id=2)
    assert sorted(t["name"] for t in listed["result"]["tools"]) == ["guess", "leaderboard"]
    called = guess.request("tools/call", {"name": "guess", "arguments": {"n": 50}}, request_id=3)
    assert called["result"]["isError"] is False
    hidden = guess.request("tools/call", {"name": "hint", "arguments": {}}, request_id=4)
    assert hidden["error"]["code"] == -32602

    closing = time.monotonic()
    code, _ = guess.close_stdin()
    assert code == 0
    assert time.monotonic() - closing < 15


def test_stdout_carries_only_mcp_messages() -> None:
    proc = StdioProcess("helpers.mcp:NoisyEnv", cwd=TESTS)
    try:
        proc.initialize()
        for i in range(3):
            reply = proc.request(
                "tools/call", {"name": "shout", "arguments": {"text": f"hi{i}"}}, i + 1
            )
            assert reply["result"]["structuredContent"] == {"result": f"HI{i}"}
        code, stderr = proc.close_stdin()
    finally:
        proc.kill()
    assert code == 0
    for line in proc.stdout_lines:  # every byte on stdout is a JSON-RPC message
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert "printed hi0" in stderr and "logged hi2" in stderr


def test_a_bad_target_fails_fast_with_a_message() -> None:
    proc = StdioProcess("no_such_module_xyz:Env")
    try:
        code, stderr = proc.close_stdin()
    finally:
        proc.kill()
    assert code == 2
    assert "no_such_module_xyz" in stderr
    assert proc.stdout_lines == []
