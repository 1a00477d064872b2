"""The `llm` agent and the capture proxy against a real model server (llama.cpp + SmolLM2-135M).

A 135M model is a plumbing test, not a benchmark: nothing here asserts success rates, only that
every request is accepted, every model turn is recorded and malformed calls are counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.harness.eval.cli import main
from mcpgym.harness.eval.harness import HarnessEvalConfig, harness_eval
from mcpgym.harness.eval.runner import evaluate

pytestmark = [pytest.mark.models, pytest.mark.timeout(900)]

EPISODES = 8


def _eval(argv: list[str]) -> None:
    assert main(["eval", "--quiet", *argv]) == 0


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]


def test_llm_agent_plays_the_example_env_against_a_real_model(
    model_server: str, tmp_path: Path
) -> None:
    out = tmp_path / "llm"
    _eval(
        [
            "--env", "mcpgym.examples.guess:GuessEnv",
            "--agent", "llm",
            "--model-url", model_server,
            "--model", "smollm2",
            "--episodes", str(EPISODES),
            "--max-steps", "4",
            "--max-tokens", "64",
            "--concurrency", "2",
            "--model-timeout", "300",
            "--out", str(out),
        ]
    )  # fmt: skip
    records = _records(out)
    assert len(records) == EPISODES
    reasons = {r["spec_id"]: (r["done_reason"], r["error"]) for r in records}
    assert not [r for r in records if r["done_reason"] == "error"], reasons
    assert all(r["steps"] >= 1 for r in records), reasons
    for r in records:
        turns = r["model_turns"]
        assert turns, f"{r['spec_id']}: no model turn recorded"
        assert [t["turn"] for t in turns] == list(range(len(turns)))
        assert len(r["timing"]["model_s"]) == len(turns)
        # every tool call the model made either reached the environment or was rejected
        made = sum(len(t["tool_calls"]) for t in turns)
        assert made == r["tool_calls"] + r["malformed_calls"] + _unplayed(r, turns)
        assert all(t["usage"].get("prompt_tokens", 0) > 0 for t in turns)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["malformed_tool_calls"] == sum(r["malformed_calls"] for r in records)
    assert summary["model_turns"] == sum(len(r["model_turns"]) for r in records)
    report = (out / "report.md").read_text()
    assert "malformed tool calls" in report


def _unplayed(record: dict[str, Any], turns: list[dict[str, Any]]) -> int:
    """Well-formed calls still queued when the episode ended (max steps or done)."""
    accepted = sum(len(t["tool_calls"]) - len(t["rejected"]) for t in turns)
    return accepted - record["tool_calls"]


async def test_capture_proxy_forwards_a_harness_turn_to_the_real_model(
    model_server: str, harness_script: list[str], tmp_path: Path
) -> None:
    trajectories = tmp_path / "trajectories.jsonl"
    config = HarnessEvalConfig(
        harness="cli",
        env="mcpgym.examples.guess:GuessEnv",
        model_url=model_server,
        model="smollm2",
        command=tuple(harness_script),
        options={"one_shot": True},
        turn_timeout_s=300,
        trajectories=trajectories,
    )
    spec = EpisodeSpec(id="harness-0", reset={"seed": 3}, prompt="Guess a number from 1 to 100.")
    async with harness_eval(config) as (target, user):
        result = await evaluate(target, user, [spec], turn_timeout=300)
    (record,) = result.records
    assert record.done_reason != "error", record.error
    assert record.final_metadata.get("termination") != "harness_crashed", record.final_metadata
    (trajectory,) = [json.loads(x) for x in trajectories.read_text().splitlines()]
    (call,) = trajectory["llm_calls"]
    assert call["call"]["status"] == 200
    assert call["call"]["upstream"].startswith(model_server.removesuffix("/v1"))
    roles = [s["role"] for s in call["segments"]]
    assert "context" in roles and "action" in roles, roles
    assert any(s["kind"] == "tool_spec" for s in call["segments"]), "offered tools are context"
