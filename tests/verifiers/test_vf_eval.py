"""The export as a user runs it: `vf-eval`, verifiers 0.4.0's own CLI from the pinned verifiers
venv, over the package `mcpgym export verifiers` generated, offline.

The harness is verifiers' `null` harness (its chat program, with the rollout's tool server as
its MCP server), the runtime a local subprocess, and the model a scripted one on 127.0.0.1
(mcpgym's capture proxy with `scripted_model`, an OpenAI-compatible endpoint answering with
tool calls): Calendar Gym's gold plans, and bisection for Guess the Number. What is read is
vf-eval's own results file (`traces.jsonl` in its run directory): every task has its prompt,
every rollout's reward equals what mcpgym's own client gets for the trace's tool calls from the
task's reset, the good policy wins and a wrong one scores lower.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from calendar_plans import gold_calls, task_prompt
from export_helpers import install, ours
from vf_eval_policy import Policy, bisect_guess, follow_plans, never_guess, turns

from helpers.compat import VERIFIERS_040_CLIENT, compat
from scripted_model import ScriptedModel
from scripted_model.server import scripted_proxy_thread

pytestmark = [pytest.mark.verifiers, pytest.mark.timeout(900)]

GUESS_SEEDS = [3, 7, 11]
GOLD, LAZY = (0, 7, 31, 64, 90), (12, 45, 77)  # v2 tasks whose prompts are unique in the split
KEY_VAR = "MCPGYM_VF_EVAL_KEY"


def vf_eval(
    python: Path, site: Path, taskset: str, policy: Policy, out: Path, *extra: str
) -> list[dict[str, Any]]:
    """Run `vf-eval TASKSET` against a scripted model playing `policy`; the episodes of its
    results file (and the model's script errors, which fail the test)."""
    model = ScriptedModel(turns(policy))
    with scripted_proxy_thread(model, accept_unknown_keys=True) as proxy:
        cmd = [
            str(python.parent / "vf-eval"),
            taskset,
            "--env.agent.harness.id",
            "null",
            "--env.agent.runtime.type",
            "subprocess",
            "--client.base-url",
            proxy.openai_base_url,
            "--client.api-key-var",
            KEY_VAR,
            "--model",
            "scripted",
            "--no-push",
            "--no-rich",
            "--output-dir",
            str(out),
            "--run.name",
            "run",
            *extra,
        ]
        env = {
            **os.environ,
            KEY_VAR: "scripted-key",
            "PYTHONPATH": str(site),
            # the harness's chat program is a uv script: uv from the verifiers venv
            "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert not model.errors, model.errors
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    lines = (out / "run" / "traces.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def played(episode: dict[str, Any]) -> dict[str, Any]:
    """One rollout of vf-eval's results: its task, prompt, tool calls, tool answers and reward."""
    assert episode["ok"] and not episode["errors"], episode["errors"]
    (trace,) = episode["traces"]
    data = trace["task"]["data"]
    messages = [node["message"] for node in trace["nodes"]]
    calls = [
        [c["name"], json.loads(c["arguments"])]
        for m in messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or []
    ]
    return {
        "name": data["name"],
        "prompt": data["prompt"],
        "reset": data["reset"],
        "first_user": next(m["content"] for m in messages if m["role"] == "user"),
        "calls": calls,
        "answers": [m["content"] for m in messages if m["role"] == "tool"],
        "reward": trace["rewards"]["mcpgym_reward"]["score"],
        "stop": trace["stop_condition"],
    }


def generated_tasks(site: Path, name: str) -> list[dict[str, Any]]:
    """The tasks the generated module carries (its `TASKS` literal, read without importing)."""
    text = (site / name / "__init__.py").read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("TASKS: list[dict[str, Any]]"))
    literal = line.split("json.loads(", 1)[1].rsplit(")", 1)[0]
    return json.loads(ast.literal_eval(literal))  # the string literal the export wrote (repr)


def check_against_ours(url: str, runs: list[dict[str, Any]]) -> None:
    """Each rollout's prompt is its task's, and its reward is mcpgym's own for the same calls."""
    for run in runs:
        assert run["prompt"] and run["prompt"] in run["first_user"], run
        _, answers, reward = ours(url, run["reset"], run["calls"])
        assert run["reward"] == pytest.approx(reward), run
        # verifiers 0.4.0 records a tool answer with the model request that carries it: when a
        # stop (`mcpgym_done`) ends the rollout, the last answer has no request, and no node
        seen = answers[:-1] if run["stop"] == "mcpgym_done" else answers
        assert [json.loads(a) for a in run["answers"]] == seen, run


@compat(
    VERIFIERS_040_CLIENT,
    "vf-eval (scripted model, subprocess runtime) over `mcpgym export verifiers`",
    "works",
    (
        "Guess: every prompt set; vf-eval's rewards and tool answers equal mcpgym's client for "
        "the same calls; a worse policy scores lower"
    ),
)
def test_vf_eval_plays_the_guess_export(
    guess_server: str, verifiers_python: Path, tmp_path: Path
) -> None:
    seeds = [f"--seed={n}" for n in GUESS_SEEDS]
    site = install(verifiers_python, tmp_path, guess_server, "--name", "guess_vf", *seeds)
    tasks = generated_tasks(site, "guess_vf")
    assert [t["reset"] for t in tasks] == [{"seed": n} for n in GUESS_SEEDS]
    assert all(t["prompt"] for t in tasks)

    good = [
        played(e) for e in vf_eval(verifiers_python, site, "guess_vf", bisect_guess, tmp_path / "a")
    ]
    assert sorted(r["name"] for r in good) == sorted(f"seed={n}" for n in GUESS_SEEDS)
    check_against_ours(guess_server, good)
    for run in good:
        assert ours(guess_server, run["reset"], run["calls"])[1][-1]["verdict"] == "correct"
        assert run["stop"] == "mcpgym_done" and run["reward"] > 0.5  # bisection won

    bad = [
        played(e)
        for e in vf_eval(verifiers_python, site, "guess_vf", never_guess(3), tmp_path / "b")
    ]
    check_against_ours(guess_server, bad)
    by_name = {r["name"]: r["reward"] for r in good}
    for run in bad:
        assert len(run["calls"]) == 3 and run["reward"] < by_name[run["name"]], run


@compat(
    VERIFIERS_040_CLIENT,
    "vf-eval (scripted model, subprocess runtime) over `mcpgym export verifiers`",
    "works",
    (
        "Calendar Gym v2: every task has its prompt; gold plans score 1.0, a lazy `finish` less, "
        "equal to mcpgym's client"
    ),
)
def test_vf_eval_plays_the_calendar_export(
    calendar_server: str, verifiers_python: Path, tmp_path: Path
) -> None:
    """One vf-eval run over some v2 tasks: the gold plan on `GOLD`, a wrong policy on `LAZY`
    (`finish` at once, claiming the work done). Tasks are told apart by their prompts."""
    site = install(verifiers_python, tmp_path, calendar_server, "--name", "cal_vf", "--split=v2")
    tasks = generated_tasks(site, "cal_vf")
    assert len(tasks) > 100 and all(t["prompt"] for t in tasks)  # issue 28: they were all null
    assert {t["prompt"] for t in tasks} >= {task_prompt("v2", i) for i in (*GOLD, *LAZY)}
    names = [f"v2/{i}" for i in (*GOLD, *LAZY)]
    plans = {i: gold_calls("v2", i) for i in (*GOLD, *LAZY)}
    prompts = {i: task_prompt("v2", i) for i in (*GOLD, *LAZY)}
    policy = follow_plans(
        [(prompts[i], plans[i]) for i in GOLD] + [(prompts[i], plans[i][-1:]) for i in LAZY]
    )
    select = ["--select.include.names", json.dumps(names)]
    runs = [played(e) for e in vf_eval(verifiers_python, site, "cal_vf", policy, tmp_path, *select)]
    assert sorted(r["name"] for r in runs) == sorted(names)  # vf-eval's own task selection
    check_against_ours(calendar_server, runs)
    for run in runs:
        index = int(run["name"].split("/")[1])
        assert run["prompt"] == prompts[index]
        assert run["stop"] == "mcpgym_done"  # `finish` ended the episode, and the rollout
        if index in GOLD:
            assert run["calls"] == plans[index]
            assert run["reward"] == pytest.approx(1.0), run  # the gold plan passes the grade
        else:
            assert [c[0] for c in run["calls"]] == ["finish"]
            assert run["reward"] < 1.0, run  # nothing done: the grade says so
