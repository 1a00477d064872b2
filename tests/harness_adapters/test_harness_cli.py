"""`HarnessEnvironment` with the `cli` adapter: NDJSON turns, one-shot commands, stdio tools,
and the failures — a turn timeout, a killed harness, a harness that exits — each ending the
episode cleanly, after which `reset` works."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable
from typing import Any

import pytest
from conftest import AGENT, Leaks
from harness_envs import CallLogEnv

from helpers.wait import await_until
from mcpgym.harness.adapters import CliAdapter, OneShotCliAdapter
from mcpgym.harness.hosted.env import HarnessAction, HarnessEnvironment

pytestmark = pytest.mark.server

Make = Callable[..., HarnessEnvironment]


@pytest.fixture
def make_env(harnesses: list[HarnessEnvironment]) -> Make:
    def make(adapter: Any = None, **options: Any) -> HarnessEnvironment:
        env = HarnessEnvironment(CallLogEnv, adapter or CliAdapter(AGENT), **options)
        harnesses.append(env)
        return env

    return make


async def turn(env: HarnessEnvironment, message: str, **kwargs: Any) -> Any:
    return await env.astep(HarnessAction(message=message), **kwargs)


async def test_ndjson_turns_call_tools_inside_the_environment(leaks: Leaks, make_env: Make) -> None:
    env = make_env()
    await env.areset(episode_id="cli-two")
    leaks.port(env.tools.port)
    first = await turn(env, 'call note {"text": "one"}')
    second = await turn(env, 'call add {"a": 2, "b": 3}')
    assert CallLogEnv.calls_of("cli-two") == [("note", {"text": "one"}), ("add", {"a": 2, "b": 3})]
    assert [e["type"] for e in first.events] == [
        "tool_call",
        "tool_result",
        "text",
        "turn_complete",
    ]
    assert second.response.startswith('add -> {"result": 5} | history=')
    assert json.loads(second.response.split("history=")[1]) == [
        'call note {"text": "one"}',
        'call add {"a": 2, "b": 3}',
    ]  # one process for the episode: it kept the first turn
    assert (second.tool_calls[0].result, second.reward) == (5, 0.1)


async def test_the_cli_may_end_the_task(leaks: Leaks, make_env: Make) -> None:
    env = make_env()
    await env.areset()
    leaks.port(env.tools.port)
    obs = await turn(env, "done")
    assert (obs.done, obs.termination, obs.metadata["harness_done"]) == (True, None, True)


async def test_tools_over_stdio_still_run_in_this_process(leaks: Leaks, make_env: Make) -> None:
    env = make_env(transport="stdio")
    await env.areset(episode_id="cli-stdio")
    leaks.port(env.tools.port)
    obs = await turn(env, 'call note {"text": "via stdio"}')
    assert obs.tool_calls[0].result == {"notes": 1, "seed": None}, obs.error
    assert CallLogEnv.calls_of("cli-stdio") == [("note", {"text": "via stdio"})]


async def test_one_shot_commands_get_the_message_and_the_turn(leaks: Leaks, make_env: Make) -> None:
    adapter = OneShotCliAdapter([*AGENT, "--one-shot", "{message}", "{turn}"])
    env = make_env(adapter)
    await env.areset(episode_id="cli-oneshot")
    leaks.port(env.tools.port)
    first = await turn(env, 'call note {"text": "once"}')
    second = await turn(env, "hello there")
    assert first.response == 'one-shot turn 1: note -> {"notes": 1, "seed": null}'
    assert second.response == "one-shot turn 2: echo: hello there"
    assert [e["type"] for e in second.events] == ["text", "turn_complete"]
    assert CallLogEnv.calls_of("cli-oneshot") == [("note", {"text": "once"})]


async def test_a_one_shot_command_that_fails_crashes_the_episode(
    leaks: Leaks, make_env: Make
) -> None:
    env = make_env(OneShotCliAdapter([*AGENT, "--one-shot", "{message}", "{turn}"]))
    await env.areset()
    leaks.port(env.tools.port)
    obs = await turn(env, "die")
    assert (obs.done, obs.termination) == (True, "harness_crashed")
    assert "exit code 3" in (obs.error or "")
    assert "fatal: the agent gave up on purpose" in (obs.error or "")


async def test_turn_timeout_ends_the_episode_and_reset_works(leaks: Leaks, make_env: Make) -> None:
    env = make_env(turn_timeout_s=30.0)
    await env.areset()
    leaks.port(env.tools.port)
    pid = env.adapter.pid
    obs = await turn(env, "hang", timeout_s=0.5)
    assert (obs.done, obs.termination, obs.reward) == (True, "turn_timeout", None)
    assert "0.5 s" in (obs.error or "")
    assert pid is not None and not _alive(pid)
    assert not env.state.running and env.state.termination == "turn_timeout"
    await env.areset(episode_id="after-timeout")
    leaks.port(env.tools.port)
    obs = await turn(env, 'call note {"text": "again"}')
    assert obs.termination is None and CallLogEnv.calls_of("after-timeout") == [
        ("note", {"text": "again"})
    ]


async def test_a_killed_harness_is_a_crash_with_its_stderr(leaks: Leaks, make_env: Make) -> None:
    env = make_env()
    await env.areset()
    leaks.port(env.tools.port)
    await turn(env, "warm up")
    assert env.adapter.pid is not None
    os.kill(env.adapter.pid, signal.SIGKILL)
    obs = await turn(env, "are you there?")
    assert (obs.done, obs.termination) == (True, "harness_crashed")
    assert "exit code -9" in (obs.error or "")
    assert "ndjson agent ready" in (obs.error or "")  # the stderr tail
    await env.areset()
    leaks.port(env.tools.port)
    assert (await turn(env, "hello")).response.startswith("echo: hello")


async def test_a_harness_killed_mid_turn_is_a_crash(leaks: Leaks, make_env: Make) -> None:
    env = make_env()
    await env.areset()
    leaks.port(env.tools.port)
    pid = env.adapter.pid
    assert pid is not None
    task = asyncio.ensure_future(turn(env, "hang"))
    await await_until(
        lambda: _stderr_has(env, "hanging on purpose"), within=10.0, what="the agent to hang"
    )
    os.kill(pid, signal.SIGKILL)
    obs = await task
    assert obs.termination == "harness_crashed"
    assert "hanging on purpose" in (obs.error or "")


async def _stderr_has(env: HarnessEnvironment, text: str) -> bool:
    proc = env.adapter._proc  # type: ignore[attr-defined]
    return proc is not None and text in proc.stderr_tail()


async def test_a_harness_that_exits_is_a_crash(leaks: Leaks, make_env: Make) -> None:
    env = make_env()
    await env.areset()
    leaks.port(env.tools.port)
    obs = await turn(env, "die")
    assert (obs.done, obs.termination) == (True, "harness_crashed")
    assert "exit code 3" in (obs.error or "")
    assert "fatal: the agent gave up on purpose" in (obs.error or "")


async def test_everything_the_harness_spawned_is_stopped(leaks: Leaks, make_env: Make) -> None:
    env = make_env()
    await env.areset()
    leaks.port(env.tools.port)
    obs = await turn(env, "spawn")
    pids = [int(p) for p in obs.response.split(" | ")[0].split()[1:]]
    assert all(_alive(p) for p in pids)
    await env.aclose()
    assert not any(_alive(p) for p in pids)  # the group, and the one that left it


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False
