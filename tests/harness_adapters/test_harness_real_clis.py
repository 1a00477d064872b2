"""The real agent CLIs as harnesses (marker `agents`): Claude Code, Codex and OpenCode each play
two turns of a `HarnessEnvironment` against the scripted model through the capture proxy.

The environment's own call log proves the tools ran inside it; the second turn's model request
holds the first turn (the conversation was kept across turns — one process for Claude Code, a
resumed session for Codex and OpenCode). Needs `.ci/agent-clis.sh`; skipped without the CLIs,
unless CI=true, where that is a failure.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest
from conftest import Leaks
from harness_envs import CallLogEnv

from mcpgym.harness.adapters import make_adapter
from mcpgym.harness.capture import CaptureProxy
from mcpgym.harness.hosted.env import HarnessAction, HarnessEnvironment
from scripted_model import ScriptedModel, call, say
from scripted_model.clis import find_cli
from scripted_model.server import scripted_proxy

pytestmark = [pytest.mark.agents, pytest.mark.timeout(600)]

CLIS = {  # harness name -> (program, the model id it asks for)
    "claude-code": ("claude", "claude-sonnet-4-5"),
    "codex": ("codex", "gpt-5-codex"),
    "opencode": ("opencode", "scripted"),
}
TURN_TIMEOUT_S = 240.0
SCRIPT = [
    call("note", {"text": "first note"}),
    say("I wrote the first note."),
    call("note", {"text": "second note"}),
    say("I wrote the second note."),
]


def executable(harness: str) -> str:
    program = CLIS[harness][0]
    found = find_cli(program)  # type: ignore[arg-type]
    if found is None:
        reason = f"{program} is not installed (run .ci/agent-clis.sh)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel(SCRIPT)


@pytest.fixture
async def proxy(model: ScriptedModel) -> AsyncIterator[CaptureProxy]:
    async with scripted_proxy(model) as running:
        yield running


def harness_env(
    harness: str, proxy: CaptureProxy, made: list[HarnessEnvironment], **options: Any
) -> HarnessEnvironment:
    adapter = make_adapter(harness, executable=executable(harness))
    env = HarnessEnvironment(
        CallLogEnv,
        adapter,
        capture=proxy,
        model_name=CLIS[harness][1],
        turn_timeout_s=TURN_TIMEOUT_S,
        **options,
    )
    made.append(env)
    return env


@pytest.mark.parametrize("harness", sorted(CLIS))
async def test_two_turns_with_the_real_cli(
    harness: str,
    proxy: CaptureProxy,
    model: ScriptedModel,
    harnesses: list[HarnessEnvironment],
    leaks: Leaks,
) -> None:
    env = harness_env(harness, proxy, harnesses)
    episode = f"real-{harness}"
    reset = await env.areset(seed=3, episode_id=episode)
    leaks.port(env.tools.port)
    assert sorted(reset.metadata["tools"]) == sorted(
        env.adapter.capabilities.tool_name("env", t) for t in ("add", "finish", "note")
    )
    first = await env.astep(HarnessAction(message="Please write the first note."))
    assert first.termination is None, first.error
    second = await env.astep(HarnessAction(message="Now write the second note."))
    assert second.termination is None, second.error

    # the tools ran inside the environment, in order, with the scripted arguments
    assert CallLogEnv.calls_of(episode) == [
        ("note", {"text": "first note"}),
        ("note", {"text": "second note"}),
    ]
    assert [c.result for c in first.tool_calls + second.tool_calls] == [
        {"notes": 1, "seed": 3},
        {"notes": 2, "seed": 3},
    ]
    assert (first.response, second.response) == (
        "I wrote the first note.",
        "I wrote the second note.",
    )
    types = [e["type"] for e in second.events]
    assert {"tool_call", "tool_result", "llm_request", "llm_response"} <= set(types)
    assert types[-1] == "turn_complete"

    # the second turn's model request holds the whole first turn
    assert env.capture_key is not None
    assert model.errors == []
    last = json.dumps(model.requests(env.capture_key)[-1].body)
    for text in ("Please write the first note.", "I wrote the first note.", "first note"):
        assert text in last, f"{text!r} is missing from the second turn's request"
    trajectory = env.trajectory()
    assert [t.message for t in trajectory.turns] == [
        "Please write the first note.",
        "Now write the second note.",
    ]
    assert len(trajectory.llm_calls) >= 4
    await env.aclose()


async def test_a_killed_claude_code_is_a_crash_and_reset_works(
    proxy: CaptureProxy, harnesses: list[HarnessEnvironment], leaks: Leaks
) -> None:
    env = harness_env("claude-code", proxy, harnesses)
    await env.areset(episode_id="real-kill")
    leaks.port(env.tools.port)
    pid = env.adapter.pid  # type: ignore[attr-defined]
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    obs = await env.astep(HarnessAction(message="Anyone there?"))
    assert (obs.done, obs.termination) == (True, "harness_crashed")
    assert "exit code -9" in (obs.error or "")
    await env.areset(episode_id="real-kill-2")
    leaks.port(env.tools.port)
    obs = await env.astep(HarnessAction(message="Please write the first note."))
    assert obs.termination is None, obs.error
    assert CallLogEnv.calls_of("real-kill-2") == [("note", {"text": "first note"})]
