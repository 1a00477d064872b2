"""Verifiers environments through the bridge report what Verifiers' own scoring reports, and
keep the row's answer from the agent.

Environments: Verifiers 0.3.1's own `ReasoningGymEnv` (verifiers' class, its data from the
`reasoning-gym` package off PyPI; a rubric of two reward functions, one at weight 0), a classic
`ToolEnv` (two reward functions and the `ToolEnv`'s own monitor metrics) and a Verifiers 0.4.0
`verifiers.v1` taskset (two weighted rewards). Each episode's last step carries the per-function
values in `metadata["verifiers"]` (`metrics`; v1 also `rewards` as `{"score", "weight"}`) and
`metadata["rubric"]` (each function's score), equal to what the library's own `run_rollout` /
`Task.score` give for the same actions in its venv; the row's answer is nowhere in the reset
observation and reaches the operator apart (`metadata["verifiers"]["operator"]` at the end,
`BridgeEnvironment.operator_info` in process).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from bridge_helpers import FIXTURES, run_in

from helpers.server import run_server
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.integrations.bridge import bridge_environment
from mcpgym.servers import create_app

pytestmark = [pytest.mark.bridge, pytest.mark.server, pytest.mark.timeout(600)]

SLOW = {"start_timeout_s": 300.0, "call_timeout_s": 300.0}  # a loaded machine imports slowly

RG = "verifiers.legacy.envs.integrations.reasoninggym_env:ReasoningGymEnv"
RG_ARGS = {"gym": "basic_arithmetic", "num_train_examples": 4, "num_eval_examples": 2, "seed": 1}


def _rg_answers(python: Path) -> list[str]:
    """The true answers of the ReasoningGymEnv rows (its rows' `answer` is an index into them)."""
    code = (
        "import json, sys; from verifiers.legacy.envs.integrations.reasoninggym_env import "
        "ReasoningGymEnv as E; e = E(**json.loads(sys.argv[1])); "
        "rows = e.get_dataset(); "
        "print(json.dumps([str(e.rg_dataset[int(r['answer'])]['answer']) for r in rows]))"
    )
    done = subprocess.run(
        [str(python), "-c", code, json.dumps(RG_ARGS)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _play(env_cls: type, episodes: list[tuple[dict[str, Any], list[Any]]]) -> list[Any]:
    """Each `(reset, calls)` played through mcpgym's client over `/ws`, on one server: per
    episode, the reset observation and each step's (reward, done, metadata)."""
    played = []
    with (
        run_server(create_app(env_cls)) as server,
        SyncEnvClient(server.url, timeout=150) as client,
    ):
        for reset, calls in episodes:
            first = client.reset(**reset)
            steps = []
            for name, arguments in calls:
                res = client.step(CallToolAction(tool_name=name, arguments=arguments))
                assert res.observation.error is None, res.observation.error  # type: ignore[attr-defined]
                steps.append((res.reward, res.done, res.observation.metadata))
            played.append((first.observation.model_dump(), steps))
    return played


def _check_scores(steps: list[Any], own: dict[str, Any]) -> dict[str, Any]:
    """The last step carries the library's own scores; the steps before it carry none."""
    *before, (reward, done, metadata) = steps
    assert all("verifiers" not in m and "rubric" not in m for _, _, m in before)
    assert done and reward == pytest.approx(own["reward"])
    reported = metadata["verifiers"]
    assert reported["reward"] == pytest.approx(own["reward"])
    assert reported["metrics"] == pytest.approx(own["metrics"])
    return reported


RG_CASES = [
    # (row, the final answer's content given the row's true answer, whether it is right)
    (0, "<answer>{}</answer>", True),
    (1, "<answer>{}0</answer>", False),  # a wrong answer, well formatted
    (2, "{}", False),  # the right answer outside the tags the parser reads: not credited
    (3, "<answer>{}</answer>", True),
]


def test_reasoning_gym_env_scores_as_its_own_rollout(worker_venvs: dict[str, Path]) -> None:
    python = worker_venvs["verifiers031"]
    truths = _rg_answers(python)
    episodes = [
        ({"index": row}, [["final_answer", {"content": template.format(truths[row])}]])
        for row, template, _ in RG_CASES
    ]
    env_cls = bridge_environment(
        "verifiers-classic", RG, python=python, options={"env_args": RG_ARGS}, **SLOW
    )
    played = _play(env_cls, episodes)
    own_episodes = json.dumps([[reset["index"], calls] for reset, calls in episodes])
    owns = run_in(
        python, "vf_classic_score.py", "--episodes", own_episodes, RG, json.dumps(RG_ARGS)
    )
    formats = []
    for (first, steps), own, (_, _, right) in zip(played, owns, RG_CASES, strict=True):
        reported = _check_scores(steps, own)
        rubric = steps[-1][2]["rubric"]
        assert rubric == pytest.approx(own["metrics"])
        assert set(rubric) == {"check_answer_reward_func", "format_reward_func"}
        assert (rubric["check_answer_reward_func"] == 1.0) is right
        formats.append(rubric["format_reward_func"])
        # the row's answer (here the index of its entry) is the operator's, not the agent's
        assert "answer" not in first["metadata"]["observation"]
        assert reported["operator"]["answer"] == own["answer"]
    # the weight-0 function is reported too: it tells the unformatted answer apart
    assert formats[0] == formats[3] > formats[2]


def test_tool_env_metrics_and_answer(worker_venvs: dict[str, Path]) -> None:
    python = worker_venvs["verifiers031"]
    calls = [
        ["add", {"a": 10, "b": 32}],
        ["add", {"a": 1, "b": 1}],
        ["final_answer", {"content": "42"}],
    ]
    env_cls = bridge_environment(
        "verifiers-classic", "vf_toolenv:load_environment", python=python, paths=[FIXTURES], **SLOW
    )
    ((first, steps),) = _play(env_cls, [({"index": 1}, calls)])
    (own,) = run_in(python, "vf_classic_score.py", "1", json.dumps(calls))
    reported = _check_scores(steps, own)
    assert {"correct", "used_add", "total_tool_calls", "add_calls"} <= set(reported["metrics"])
    assert steps[-1][2]["rubric"] == pytest.approx(own["metrics"])
    assert own["answer"] == "42" and "42" not in json.dumps(first)  # not in what the agent sees
    assert reported["operator"]["answer"] == "42"


def test_v1_taskset_rewards_and_task_data(worker_venvs: dict[str, Path]) -> None:
    python = worker_venvs["verifiers040"]
    calls = [
        ["calc_add", {"a": 2, "b": 3}],
        ["calc_mul", {"a": 5, "b": 4}],
        ["final_answer", {"content": "20"}],
    ]
    env_cls = bridge_environment(
        "verifiers-v1", "vf_taskset:load_taskset", python=python, paths=[FIXTURES], **SLOW
    )
    ((first, steps),) = _play(env_cls, [({"index": 1}, calls)])
    (own,) = run_in(python, "vf_v1_score.py", "1", json.dumps(calls))
    reported = _check_scores(steps, own)
    assert reported["rewards"] == own["rewards"]  # {"score", "weight"} per function
    assert (
        set(own["rewards"]) == {"correct", "tool_use"}
        and own["rewards"]["tool_use"]["weight"] == 0.5
    )
    rubric = steps[-1][2]["rubric"]
    assert rubric == {k: v["score"] for k, v in own["rewards"].items()} | own["metrics"]
    assert own["task"]["answer"] == "20" and "20" not in json.dumps(first)
    assert reported["operator"]["task"] == own["task"]


async def test_operator_info_in_process(worker_venvs: dict[str, Path]) -> None:
    """In process the operator reads the row's answer on the environment, from the reset on."""
    env_cls = bridge_environment(
        "verifiers-classic",
        "vf_toolenv:load_environment",
        python=worker_venvs["verifiers031"],
        paths=[FIXTURES],
        **SLOW,
    )
    env = env_cls()
    try:
        obs = await env.areset(index=0)
        assert "answer" not in obs.metadata["observation"]
        assert env.operator_info is not None and env.operator_info["answer"] == "5"
    finally:
        await env.aclose()
