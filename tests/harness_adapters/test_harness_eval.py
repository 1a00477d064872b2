"""`mcpgym eval --harness`: the runner plays harness episodes (a `HarnessEnvironment` per
episode, the `HarnessUser` agent sending the prompt and follow-ups) and writes trajectories."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from conftest import AGENT
from harness_envs import CallLogEnv

from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.harness.eval.harness import HarnessEvalConfig, add_arguments, harness_eval
from mcpgym.harness.eval.runner import evaluate
from mcpgym.harness.trajectory import read_trajectories

pytestmark = pytest.mark.server


async def test_the_runner_plays_harness_episodes(tmp_path: Path) -> None:
    config = HarnessEvalConfig(
        harness="cli",
        env="harness_envs:CallLogEnv",
        command=AGENT,
        model_url="http://127.0.0.1:9/v1",  # the NDJSON agent calls no model
        trajectories=tmp_path / "trajectories.jsonl",
    )
    specs = [
        EpisodeSpec(
            id=f"eval-{i}",
            reset={"seed": i},
            prompt=f'call note {{"text": "task {i}"}}',
            data={"user_turns": ["call finish {}", "never sent"]},
        )
        for i in range(3)
    ]
    async with harness_eval(config) as (target, agent):
        result = await evaluate(target, agent, specs, concurrency=2)
    records = {r.spec_id: r for r in result.records}
    for i in range(3):
        record = records[f"eval-{i}"]
        assert (record.done_reason, record.steps, record.success) == ("done", 2, True)
        assert record.reward_total == pytest.approx(1.1)
        assert record.final_metadata["termination"] is None
        assert CallLogEnv.calls_of(f"eval-{i}") == [("note", {"text": f"task {i}"}), ("finish", {})]
    trajectories = {t.episode_id: t for t in read_trajectories(config.trajectories)}
    assert sorted(trajectories) == ["eval-0", "eval-1", "eval-2"]
    assert [t.message for t in trajectories["eval-0"].turns] == [
        'call note {"text": "task 0"}',
        "call finish {}",
    ]
    assert [c.name for c in trajectories["eval-1"].tool_calls] == ["note", "finish"]


def test_the_eval_options_become_a_config(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    for name in ("--env", "--model-url", "--model", "--api-key"):
        parser.add_argument(name)
    parser.add_argument("--turn-timeout", type=float)
    parser.add_argument("--out", type=Path)
    add_arguments(parser)
    args = parser.parse_args(
        [
            *("--harness", "codex", "--env", "m:E", "--model-url", "http://x/v1"),
            *("--harness-bin", "/opt/codex", "--turn-timeout", "30", "--out", str(tmp_path)),
        ]
    )
    config = HarnessEvalConfig.from_args(args)
    assert (config.harness, config.executable, config.turn_timeout_s) == ("codex", "/opt/codex", 30)
    assert config.trajectories == tmp_path / "trajectories.jsonl"
    assert config.adapter_options() == {"executable": "/opt/codex"}
    with pytest.raises(ValueError, match="harness-command"):
        HarnessEvalConfig(harness="cli", env="m:E").adapter_options()


async def test_a_harness_needs_a_model_url() -> None:
    with pytest.raises(ValueError, match="model-url"):
        async with harness_eval(HarnessEvalConfig(harness="codex", env="m:E")):
            pass
