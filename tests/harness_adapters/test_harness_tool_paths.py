"""Every way an environment can run its tools is recorded and scored by a harness episode.

`EpisodeToolServer` records each MCP `tools/call` (and scores it: reward, `done`) by wrapping the
method the transports call. An environment that runs tools its own way — it overrides both
`call_tool` and `call_tool_sync`, as Calendar Gym does — is served through `call_tool_sync`
(`MCPEnvironment.invoke_tool`), so a recorder on `call_tool` saw none of its calls and a harness
episode never ended on `finish` (`agent_stopped`). These tests run a real MCP client (the
`python` harness) against each kind of environment, no agent CLI needed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Leaks
from harness_envs import CallLogEnv

from calendar_gym import CalendarEnv
from calendar_gym.suite import specs
from calendar_gym.tasks.loader import load_suite
from calendar_gym.tasks.values import entity_value, resolve
from mcpgym import MCPEnvironment
from mcpgym.harness.adapters import PythonAdapter, PythonHarnessContext
from mcpgym.harness.eval.harness import HarnessUser
from mcpgym.harness.eval.runner import evaluate
from mcpgym.harness.hosted.env import HarnessAction, HarnessEnvironment
from mcpgym.harness.sessions import InProcess

pytestmark = pytest.mark.server


class InlineLogEnv(CallLogEnv):
    """Sync tools run inline on the event loop (`blocking = False`)."""

    blocking = False


class OwnPathLogEnv(CallLogEnv):
    """Runs its tools its own way: overrides both `call_tool` and `call_tool_sync`."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
    ) -> Any:
        return self.call_tool_sync(name, arguments)

    def call_tool_sync(self, name: str, arguments: dict[str, Any] | None) -> Any:
        return MCPEnvironment.call_tool_sync(self, name, arguments)


class OwnPathInlineLogEnv(OwnPathLogEnv):
    """Its own tool path, run inline (Calendar Gym's combination)."""

    blocking = False


class OwnCallToolLogEnv(CallLogEnv):
    """Overrides `call_tool` only (the framework then calls it)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
    ) -> Any:
        return await super().call_tool(name, arguments, timeout_s)


async def three_calls(message: str, ctx: PythonHarnessContext) -> str:
    """A note, a call the environment refuses, then `finish`."""
    outputs = [
        await ctx.call_tool("note", {"text": message}),
        await ctx.call_tool("add", {"a": "not a number", "b": 1}),
        await ctx.call_tool("finish"),
    ]
    return json.dumps([[o.text, o.is_error] for o in outputs])


@pytest.mark.parametrize(
    "env_class",
    [CallLogEnv, InlineLogEnv, OwnPathLogEnv, OwnPathInlineLogEnv, OwnCallToolLogEnv],
    ids=lambda c: c.__name__,
)
async def test_every_tool_path_is_recorded_scored_and_ends_on_finish(
    leaks: Leaks,
    harnesses: list[HarnessEnvironment],
    env_class: Callable[[], CallLogEnv],
) -> None:
    env = HarnessEnvironment(env_class, PythonAdapter(three_calls))
    harnesses.append(env)
    episode = f"paths-{getattr(env_class, '__name__', 'env')}"
    await env.areset(episode_id=episode)
    leaks.port(env.tools.port)
    obs = await env.astep(HarnessAction(message="alpha"))
    assert [(c.tool, c.error is None) for c in obs.tool_calls] == [
        ("note", True),
        ("add", False),
        ("finish", True),
    ]
    note, refused, finish = obs.tool_calls
    assert note.result == {"notes": 1, "seed": None} and note.reward == 0.1
    assert refused.error is not None and refused.error["error_type"] == "invalid_args"
    assert finish.done and finish.reward == 1.0
    assert obs.done and obs.reward == pytest.approx(1.2)  # the turn's rewards; ended on finish
    assert CallLogEnv.calls_of(episode) == [("note", {"text": "alpha"}), ("finish", {})]
    assert env.state.env_state["step_count"] == 3  # each MCP call was scored as a step
    await env.aclose()


@pytest.mark.parametrize("version", ["2", "1"])
async def test_calendar_gym_gold_plans_finish_through_the_harness(version: str) -> None:
    """The agents suite's Claude Code test without the CLI: eight T1 gold plans over MCP."""
    suite = load_suite(version)
    chosen = [t.id for t in suite if t.tier == "T1"][:8]
    episodes = specs(version, tasks=chosen, phrasings=["natural"], error_modes=["structured"])
    tasks = {spec.prompt: suite.get(spec.id.split("/")[0]) for spec in episodes}
    assert len(tasks) == 8

    async def gold(message: str, ctx: PythonHarnessContext) -> str:
        task = tasks[message]
        results: dict[str, Any] = {}
        for step in task.plan:
            args = resolve(step.args, lambda ref: entity_value(task, ref), results)
            out = await ctx.call_tool(step.tool, args)
            assert not out.is_error, out.text
            results[step.id] = json.loads(out.text) if out.structured is None else out.structured
        return "Done."

    def factory() -> HarnessEnvironment:
        return HarnessEnvironment(CalendarEnv, PythonAdapter(gold), tools="simulation")

    result = await evaluate(InProcess(factory), HarnessUser(), episodes, concurrency=4)
    failed = {r.spec_id: (r.done_reason, r.error) for r in result.records if not r.success}
    assert failed == {}
    for record in result.records:
        assert record.done_reason == "done"
        state = record.final_metadata["env_state"]
        assert state["finish_status"] == "done"
        assert state["step_count"] == state["calls"] >= 2  # every call was recorded and scored
