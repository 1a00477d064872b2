"""Acceptance: `mcpgym eval --harness claude-code` on 8 Calendar Gym T1 tasks at concurrency 4,
the scripted model playing each task's gold plan through the real Claude Code, passes all 8,
on suite v2 (the default) and v1 (marker `agents`; needs `.ci/agent-clis.sh`). The same plans
without a CLI: test_harness_tool_paths.py.

The scripted model reads each plan step's `$from` references out of the tool results already in
the conversation, exactly as a model would, so the harness's own tool-result wrapping (Claude
Code's reminders, Codex's "Wall time" header) is part of what is exercised.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_harness_real_clis import executable

from calendar_gym.suite import specs
from calendar_gym.tasks.loader import load_suite
from calendar_gym.tasks.model import Task
from calendar_gym.tasks.values import entity_value, resolve
from mcpgym.harness.eval.harness import HarnessEvalConfig, harness_eval
from mcpgym.harness.eval.runner import evaluate
from scripted_model import Say, ScriptedModel, StepContext, call, say
from scripted_model.server import scripted_proxy

pytestmark = [pytest.mark.agents, pytest.mark.timeout(900)]


def _json_in(text: str) -> Any:
    """The first JSON value in a tool result's text (after any harness header)."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[min(starts) :])[0]
    except ValueError:
        return None


def gold_plan(task: Task) -> list[Any]:
    """The task's gold plan as a script: step i resolves its arguments from results 0..i-1."""

    def step(i: int) -> Any:
        def play(ctx: StepContext) -> Say:
            outputs = [
                part
                for message in ctx.conversation.messages
                for part in message.parts
                if part.kind == "tool_result"
            ]
            results = {
                task.plan[j].id: _json_in(part.text)
                for j, part in enumerate(outputs)
                if not part.is_error
            }
            plan_step = task.plan[i]
            args = resolve(plan_step.args, lambda ref: entity_value(task, ref), results)
            return call(plan_step.tool, args)

        return play

    return [step(i) for i in range(len(task.plan))] + [say("Done.")]


@pytest.mark.parametrize("version", ["2", "1"])
async def test_claude_code_passes_eight_t1_tasks_at_concurrency_4(version: str) -> None:
    suite = load_suite(version)
    chosen = [t.id for t in suite if t.tier == "T1"][:8]
    episodes = specs(version, tasks=chosen, phrasings=["natural"], error_modes=["structured"])
    assert len(episodes) == 8
    model = ScriptedModel()
    config = HarnessEvalConfig(
        harness="claude-code",
        env="calendar_gym:CalendarEnv",
        executable=executable("claude-code"),
        tools="simulation",  # the suite's `finish` is a simulation tool
        turn_timeout_s=300.0,
    )
    async with scripted_proxy(model) as proxy, harness_eval(config, proxy=proxy) as (env, agent):
        issue_key = proxy.new_episode_key

        def key_with_plan(label: str = "", listener: Any = None) -> str:
            """Each episode's key (labelled with its spec id) plays its own task's plan."""
            key = issue_key(label=label, listener=listener)
            model.set_script(key, gold_plan(suite.get(label.split("/")[0])))
            return key

        proxy.new_episode_key = key_with_plan  # type: ignore[method-assign]
        result = await evaluate(env, agent, episodes, concurrency=4)
    failed = {
        r.spec_id: (r.done_reason, r.error, r.final_metadata.get("grade"))
        for r in result.records
        if not r.success
    }
    assert failed == {}, failed
    assert model.errors == []
    assert result.summary["success_rate"] == 1.0
    for record in result.records:  # every plan step ran inside the environment, then finish
        state = record.final_metadata["env_state"]
        assert state["finish_status"] == "done" and state["calls"] >= 2
