"""Claude Code plays Code Gym: `mcpgym eval --harness claude-code` on three tasks, the scripted
model writing each task's reference solution through Claude Code's own MCP tool calls
(`write_file`, `run_tests`, `submit`), every task at reward 1.0 (marker `agents`; needs
`.ci/agent-clis.sh` and bubblewrap)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from test_harness_real_clis import executable

from code_gym.suite import specs
from code_gym.tasks import get_task
from mcpgym.harness.eval.harness import HarnessEvalConfig, harness_eval
from mcpgym.harness.eval.runner import evaluate
from scripted_model import ScriptedModel, call, say
from scripted_model.server import scripted_proxy

pytestmark = [pytest.mark.agents, pytest.mark.timeout(900)]

TASKS = ["HumanEval/0", "HumanEval/53", "repo/invoice-traceback"]


def plan(task_id: str) -> list[Any]:
    """The reference solution's files, a visible test run, then submit."""
    task = get_task(task_id)
    files = sorted(task.solution.items())
    writes = [call("write_file", {"path": p, "content": t}) for p, t in files]
    return [*writes, call("run_tests"), call("submit"), say("Submitted.")]


async def test_claude_code_solves_code_gym_tasks_through_its_mcp_tools() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("Code Gym needs bubblewrap: apt-get install -y bubblewrap")
    episodes = specs(tasks=TASKS, error_modes=["structured"])
    model = ScriptedModel()
    config = HarnessEvalConfig(
        harness="claude-code",
        env="code_gym:CodeEnv",
        executable=executable("claude-code"),
        tools="simulation",  # submit is a simulation tool
        turn_timeout_s=300.0,
    )
    async with scripted_proxy(model) as proxy, harness_eval(config, proxy=proxy) as (env, agent):
        issue_key = proxy.new_episode_key

        def key_with_plan(label: str = "", listener: Any = None) -> str:
            key = issue_key(label=label, listener=listener)
            model.set_script(key, plan(label.rsplit("/", 1)[0]))
            return key

        proxy.new_episode_key = key_with_plan  # type: ignore[method-assign]
        result = await evaluate(env, agent, episodes, concurrency=2)
    rewards = {r.spec_id: r.reward_final for r in result.records}
    assert rewards == {f"{t}/structured": 1.0 for t in TASKS}, [
        (r.spec_id, r.done_reason, r.error) for r in result.records
    ]
    assert model.errors == []
    for record in result.records:  # the calls ran inside the environment, through Claude Code
        state = record.final_metadata["env_state"]
        assert state["submitted"] is True and state["runs"] == 1
        assert state["calls"] == len(get_task(state["task"]).solution) + 2
