"""Real MCP clients against `mcpgym serve`, over Streamable HTTP and stdio: the MCP Inspector CLI
(list, call, a tool that errors) and Claude Code (`claude mcp add` + `claude mcp list`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.npm import Served, run, serve

pytestmark = pytest.mark.conformance

GUESS = "mcpgym.examples.guess:GuessEnv"
EVERYTHING = "mcpgym.examples.everything:EverythingEnv"
TOKEN = "real-clients-token"
STDIO = [sys.executable, "-m", "mcpgym.servers", "serve", GUESS, "--stdio"]

# Inspector CLI exit codes (2.12.0, observed): 0 success, 5 the tool returned isError or does not
# exist, 4 the server could not be reached.
OK, TOOL_ERROR, UNREACHABLE = 0, 5, 4


@pytest.fixture(scope="module")
def guarded(node_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """GuessEnv in production mode behind a bearer token."""
    log_dir = tmp_path_factory.mktemp("guarded")
    with serve(GUESS, log_dir, "--mode", "production", "--token", TOKEN) as served:
        yield served


def inspector(node_bin: Path, env: dict[str, str], *args: str) -> tuple[int, Any, str]:
    """Run the Inspector CLI; returns (exit code, JSON output or None, stderr)."""
    done = run([str(node_bin / "mcp-inspector"), "--cli", *args], env, timeout=120)
    try:
        output = json.loads(done.stdout)
    except ValueError:
        output = None
    return done.returncode, output, done.stderr


# -- MCP Inspector CLI ----------------------------------------------------------------------------


def test_inspector_over_http(node_bin: Path, tool_env: dict[str, str], everything: Served) -> None:
    code, listed, err = inspector(node_bin, tool_env, everything.mcp, "--method", "tools/list")
    assert code == OK, err
    assert "test_simple_text" in [t["name"] for t in listed["tools"]]

    code, called, err = inspector(
        node_bin,
        tool_env,
        everything.mcp,
        "--method",
        "tools/call",
        "--tool-name",
        "test_simple_text",
    )
    assert code == OK, err
    assert called["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]

    code, failed, _ = inspector(
        node_bin,
        tool_env,
        everything.mcp,
        "--method",
        "tools/call",
        "--tool-name",
        "test_error_handling",
    )
    assert code == TOOL_ERROR
    assert (
        failed["isError"] is True and failed["structuredContent"]["error_type"] == "execution_error"
    )

    code, _, _ = inspector(
        node_bin, tool_env, everything.mcp, "--method", "tools/call", "--tool-name", "nope"
    )
    assert code == TOOL_ERROR


def test_inspector_over_stdio(node_bin: Path, tool_env: dict[str, str]) -> None:
    code, listed, err = inspector(node_bin, tool_env, *STDIO, "--method", "tools/list")
    assert code == OK, err
    assert sorted(t["name"] for t in listed["tools"]) == ["guess", "leaderboard"]

    call = ["--method", "tools/call", "--tool-name", "guess"]
    code, called, err = inspector(node_bin, tool_env, *call, "--tool-arg", "n=50", "--", *STDIO)
    assert code == OK, err
    assert called["structuredContent"]["verdict"] in ("higher", "lower", "correct")

    code, failed, _ = inspector(node_bin, tool_env, *call, "--tool-arg", "n=1000", "--", *STDIO)
    assert code == TOOL_ERROR
    assert (
        failed["isError"] is True
        and "outside" in json.loads(failed["content"][0]["text"])["message"]
    )


def test_inspector_with_a_bearer_token(
    node_bin: Path, tool_env: dict[str, str], guarded: Served
) -> None:
    header = ["--header", f"Authorization: Bearer {TOKEN}"]
    code, listed, err = inspector(
        node_bin, tool_env, guarded.mcp, *header, "--method", "tools/list"
    )
    assert code == OK, err
    assert sorted(t["name"] for t in listed["tools"]) == ["guess", "leaderboard"]
    code, _, _ = inspector(node_bin, tool_env, guarded.mcp, "--method", "tools/list")
    assert code != OK


def test_inspector_unreachable(node_bin: Path, tool_env: dict[str, str]) -> None:
    code, _, _ = inspector(node_bin, tool_env, "http://127.0.0.1:9/mcp", "--method", "tools/list")
    assert code == UNREACHABLE


# -- Claude Code ----------------------------------------------------------------------------------


def test_claude_code_connects_over_stdio_and_http(
    node_bin: Path, tool_env: dict[str, str], everything: Served, guarded: Served, tmp_path: Path
) -> None:
    claude = str(node_bin / "claude")
    adds = [
        ["mcp", "add", "guess-stdio", "--", *STDIO],
        ["mcp", "add", "--transport", "http", "everything-http", everything.mcp],
        [
            "mcp",
            "add",
            "--transport",
            "http",
            "guarded-http",
            guarded.mcp,
            "--header",
            f"Authorization: Bearer {TOKEN}",
        ],
        ["mcp", "add", "--transport", "http", "nobody-home", "http://127.0.0.1:9/mcp"],
    ]
    for args in adds:
        done = run([claude, *args], tool_env, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    listed = run([claude, "mcp", "list"], tool_env, timeout=300, cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    status = {
        line.split(":", 1)[0]: line
        for line in listed.stdout.splitlines()
        if line.split(":", 1)[0]
        in {"guess-stdio", "everything-http", "guarded-http", "nobody-home"}
    }
    for name in ("guess-stdio", "everything-http", "guarded-http"):
        assert "Connected" in status[name], listed.stdout
    assert "Connected" not in status["nobody-home"], listed.stdout
