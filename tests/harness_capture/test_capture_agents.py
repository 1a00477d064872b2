"""The real agent CLIs (Claude Code, Codex, OpenCode) against the scripted model through the
capture proxy: a plain answer, then a tool round trip on an mcpgym environment served as an MCP
stdio server. Needs the CLIs (`.ci/agent-clis.sh`); skipped without them unless CI=true.

`MCPGYM_RECORD_FIXTURES=1` rewrites tests/harness_capture/fixtures/<cli>_tool.json (and the golden
segment lists) from the tool round trip; review the diff before committing it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import pytest

from capture_fixtures import write_fixture
from mcpgym.harness.capture import CaptureProxy, parse_request
from scripted_model import ScriptedModel, call, say
from scripted_model.clis import CLIS, Cli, McpServer, find_cli, prepare
from scripted_model.server import scripted_proxy

pytestmark = pytest.mark.agents

GUESS = McpServer(
    "env",
    [
        sys.executable,
        "-m",
        "mcpgym.servers",
        "serve",
        "mcpgym.examples.guess:GuessEnv",
        "--stdio",
        "--mode",
        "production",
    ],
)
RUN_TIMEOUT_S = 240.0


def require(cli: Cli) -> None:
    if find_cli(cli) is None:
        reason = f"{cli} is not installed (run .ci/agent-clis.sh and put its --path on PATH)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


async def run(
    cli: Cli, proxy: CaptureProxy, key: str, prompt: str, home: Path, mcp: McpServer | None
) -> tuple[int, str, str]:
    """Run one prompt; on timeout kill the CLI's whole process group (it was started in its own
    session, so the group is exactly what this test started)."""
    spec = prepare(cli, home=home, base_url=proxy.base_url, key=key, prompt=prompt, mcp=mcp)
    process = await asyncio.create_subprocess_exec(
        *spec.argv,
        env=spec.env,
        cwd=spec.cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, err = await process.communicate()
        pytest.fail(f"{cli} did not finish in {RUN_TIMEOUT_S} s; stderr: {err.decode()[-2000:]}")
    finally:
        with contextlib.suppress(ProcessLookupError):  # helpers the CLI left behind (MCP servers)
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("cli", CLIS)
async def test_plain_text_answer(cli: Cli, tmp_path: Path) -> None:
    require(cli)
    model = ScriptedModel([say("Hello from the scripted model.")])
    async with scripted_proxy(model) as proxy:
        key = proxy.new_episode_key()
        code, out, err = await run(cli, proxy, key, "Say hello.", tmp_path, None)
        calls = proxy.calls(key)
    assert code == 0, f"{cli} failed: {err[-2000:]}"
    assert "Hello from the scripted model." in out
    assert model.errors == []
    assert len(model.requests(key)) == 1
    assert all(c.status == 200 and c.stream for c in calls), "the CLIs stream their calls"


@pytest.mark.parametrize("cli", CLIS)
async def test_tool_round_trip(cli: Cli, tmp_path: Path) -> None:
    require(cli)
    model = ScriptedModel([call("guess", {"n": 50}), say("I guessed 50.")])
    async with scripted_proxy(model) as proxy:
        key = proxy.new_episode_key()
        code, out, err = await run(cli, proxy, key, "Guess the number.", tmp_path, GUESS)
        calls = proxy.calls(key)
    assert code == 0, f"{cli} failed: {err[-2000:]}"
    assert model.errors == [], model.errors
    assert "I guessed 50." in out
    first, second = model.requests(key)
    assert parse_request(first.dialect, first.body).assistant_turns == 0
    history = parse_request(second.dialect, second.body)
    assert history.assistant_turns == 1, "the second request holds the first model turn"
    (tool_call,) = [p for m in history.messages for p in m.parts if p.kind == "tool_call"]
    assert tool_call.arguments == {"n": 50}
    (result,) = [p for m in history.messages for p in m.parts if p.kind == "tool_result"]
    assert '"verdict"' in result.text, "the environment's own answer came back"
    assert "Guess the number." in str(second.body)
    if os.environ.get("MCPGYM_RECORD_FIXTURES") == "1":
        write_fixture(cli, calls, key=key, home=tmp_path)
