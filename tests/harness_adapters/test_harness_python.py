"""`HarnessEnvironment` with the `python` adapter: turns, rewards, the production face, events."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Leaks
from harness_envs import CallLogEnv
from mcp.shared.exceptions import MCPError

from mcpgym.errors import SessionError
from mcpgym.harness.adapters import PythonAdapter, PythonHarnessContext, TurnComplete
from mcpgym.harness.adapters.python import PythonAgent
from mcpgym.harness.hosted.env import HarnessAction, HarnessEnvironment
from mcpgym.rubrics import rubric

pytestmark = pytest.mark.server


async def notes_agent(message: str, ctx: PythonHarnessContext) -> str | TurnComplete:
    """Writes the message as a note; "finish" calls the finishing tool; "stop" ends the task."""
    ctx.memory.setdefault("seen", []).append(message)
    if message == "stop":
        return TurnComplete(response="stopping", done=True)
    tool = "finish" if message == "finish" else "note"
    out = await ctx.call_tool(tool, {} if tool == "finish" else {"text": message})
    return f"{out.text} (turn {ctx.turn}, seen {ctx.memory['seen']})"


@pytest.fixture
def make_env(harnesses: list[HarnessEnvironment]) -> Callable[..., HarnessEnvironment]:
    def make(agent: PythonAgent = notes_agent, **options: Any) -> HarnessEnvironment:
        env = HarnessEnvironment(CallLogEnv, PythonAdapter(agent), **options)
        harnesses.append(env)
        return env

    return make


async def test_two_turns_run_inside_the_environment(
    leaks: Leaks, make_env: Callable[..., HarnessEnvironment]
) -> None:
    env = make_env()
    reset = await env.areset(seed=7, episode_id="py-two")
    leaks.port(env.tools.port)
    assert sorted(reset.metadata["tools"]) == [
        "add",
        "finish",
        "note",
    ]  # production face, no `peek`
    first = await env.astep(HarnessAction(message="alpha"))
    second = await env.astep(HarnessAction(message="beta"))
    assert CallLogEnv.calls_of("py-two") == [
        ("note", {"text": "alpha"}),
        ("note", {"text": "beta"}),
    ]
    assert [e["type"] for e in first.events] == [
        "tool_call",
        "tool_result",
        "text",
        "turn_complete",
    ]
    assert second.response.endswith("(turn 2, seen ['alpha', 'beta'])")
    assert second.tool_calls[0].result == {"notes": 2, "seed": 7}  # reset options reached it
    assert (first.reward, second.done) == (0.1, False)
    state = env.state
    assert (state.episode_id, state.turns, state.tool_calls, state.running) == (
        "py-two",
        2,
        2,
        True,
    )
    assert state.env_state["step_count"] == 2  # each MCP call was scored as a step
    await env.aclose()
    assert not env.state.running


async def test_a_tool_that_ends_the_episode_ends_it_and_stops_the_harness(
    leaks: Leaks, make_env: Callable[..., HarnessEnvironment]
) -> None:
    env = make_env()
    await env.areset(episode_id="py-finish")
    leaks.port(env.tools.port)
    obs = await env.astep(HarnessAction(message="finish"))
    assert (obs.done, obs.reward, obs.termination) == (True, 1.0, None)
    assert not env.adapter.alive()
    with pytest.raises(SessionError, match="call reset"):
        await env.astep(HarnessAction(message="again"))
    await env.areset(episode_id="py-finish-2")  # a new episode works
    leaks.port(env.tools.port)
    assert (await env.astep(HarnessAction(message="x"))).tool_calls[0].turn == 0
    await env.aclose()


async def test_the_harness_may_end_the_task(
    leaks: Leaks, make_env: Callable[..., HarnessEnvironment]
) -> None:
    env = make_env()
    await env.areset()
    leaks.port(env.tools.port)
    obs = await env.astep(HarnessAction(message="stop"))
    assert (obs.done, obs.response, obs.reward, obs.metadata["harness_done"]) == (
        True,
        "stopping",
        None,
        True,
    )
    await env.aclose()


async def test_a_rubric_scores_each_turn_with_the_wrapped_environment(
    leaks: Leaks, make_env: Callable[..., HarnessEnvironment]
) -> None:
    seen: list[Any] = []

    def score(inp: Any) -> float:
        seen.append(type(inp.env).__name__)
        return float(len(inp.env.notes))

    env = make_env(rubric=rubric(score, name="notes"))
    await env.areset()
    leaks.port(env.tools.port)
    await env.astep(HarnessAction(message="a"))
    obs = await env.astep(HarnessAction(message="b"))
    assert (obs.reward, seen) == (2.0, ["CallLogEnv", "CallLogEnv"])
    assert obs.metadata["rubric"] == {"notes": 2.0}
    await env.aclose()


async def test_events_are_streamed_as_they_happen(
    leaks: Leaks, make_env: Callable[..., HarnessEnvironment]
) -> None:
    streamed: list[str] = []
    env = make_env(on_event=lambda event: streamed.append(event.type))
    await env.areset()
    leaks.port(env.tools.port)
    obs = await env.astep(HarnessAction(message="a"))
    assert streamed == [e["type"] for e in obs.events]
    await env.aclose()


async def test_the_harness_cannot_reach_reset_step_or_simulation_tools(
    leaks: Leaks, make_env: Callable[..., HarnessEnvironment]
) -> None:
    async def prober(message: str, ctx: PythonHarnessContext) -> str:
        refused = []
        for name in ("peek", "reset", "step", "state"):
            try:
                await ctx.call_tool(name)
            except MCPError as err:
                refused.append(f"{name}: {err}")
        return json.dumps({"tools": sorted(await ctx.list_tools()), "refused": refused})

    env = make_env(prober)
    await env.areset()
    leaks.port(env.tools.port)
    obs = await env.astep(HarnessAction(message="probe"))
    answer = json.loads(obs.response)
    assert answer["tools"] == ["add", "finish", "note"]
    assert [r.split(":")[0] for r in answer["refused"]] == ["peek", "reset", "step", "state"]
    assert all("Unknown tool" in r for r in answer["refused"])
    assert obs.tool_calls == []  # nothing ran inside the environment


async def test_the_simulation_face_adds_simulation_tools_only(
    leaks: Leaks, make_env: Callable[..., HarnessEnvironment]
) -> None:
    env = make_env(tools="simulation")
    reset = await env.areset()
    leaks.port(env.tools.port)
    assert sorted(reset.metadata["tools"]) == ["add", "finish", "note", "peek"]
    assert reset.metadata["prompt"] == "Take notes."  # the wrapped reset's own observation
