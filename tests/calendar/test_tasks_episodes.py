"""Whole-suite episodes through the evaluation runner, in process: the oracle solves every task
in both phrasings, agents that do nothing (or finish at once) earn nothing on tasks that ask for a
change, and the same seeds give the same `episodes.jsonl` apart from timings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.agents import NaiveAgent, OracleAgent
from calendar_gym.suite import parse_spec_id, specs
from calendar_gym.tasks import load_suite
from mcpgym import Observation, StepResult, ToolInfo
from mcpgym.harness.episodes import AgentAction, EpisodeRecord, EpisodeSpec
from mcpgym.harness.eval.runner import run_evaluation

SUITE = load_suite()
TRAPS = {t.id for t in SUITE if t.is_trap}


class _Scripted:
    """An agent that plays a fixed list of actions, then stops."""

    def __init__(self, name: str, actions: list[dict[str, Any]]) -> None:
        self.name = name
        self.actions = actions

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> _ScriptedEpisode:
        return _ScriptedEpisode(list(self.actions))


class _ScriptedEpisode:
    def __init__(self, actions: list[dict[str, Any]]) -> None:
        self.actions = actions

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        return self.actions.pop(0) if self.actions else None

    async def aclose(self) -> None:
        return None


FINISH_NOW = {"type": "call_tool", "tool_name": "finish",
              "arguments": {"status": "done", "summary": "All done."}}  # fmt: skip


def _task(record: EpisodeRecord) -> str:
    return parse_spec_id(record.spec_id)[0]


def test_oracle_solves_every_task_in_both_phrasings() -> None:
    result = run_evaluation(
        CalendarEnv, OracleAgent(), specs(error_modes=["structured"]), concurrency=8
    )
    failed = [(r.spec_id, r.final_metadata.get("grade")) for r in result.records if not r.success]
    assert not failed, failed[:2]
    assert len(result.records) == 2 * len(SUITE)
    for r in result.records:
        assert r.done_reason == "done" and r.reward_final == 1.0
        assert r.final_metadata["failures"] == []
        assert r.final_metadata["grade"]["score"] == 1.0


def test_oracle_is_unaffected_by_plain_errors_in_traps() -> None:
    result = run_evaluation(
        CalendarEnv, OracleAgent(), specs(tiers=["T4"], error_modes=["plain", "google"])
    )
    assert result.summary["success_rate"] == 1.0


@pytest.mark.parametrize(
    "agent",
    [_Scripted("do-nothing", []), _Scripted("finish-now", [FINISH_NOW])],
    ids=["do-nothing", "finish-now"],
)
def test_doing_nothing_or_finishing_at_once_earns_nothing(agent: _Scripted) -> None:
    result = run_evaluation(CalendarEnv, agent, specs(error_modes=["structured"]), concurrency=8)
    for r in result.records:
        if _task(r) in TRAPS:
            assert not r.success  # neither says cannot_complete / needs_clarification
            continue
        assert not r.success and r.reward_final == 0.0 and r.reward_total == 0.0, r.spec_id
    finished = [r for r in result.records if r.steps]
    assert all(r.final_metadata["grade"]["score"] == 0.0 for r in finished)
    if agent.name == "finish-now":
        assert len(finished) == len(result.records)
        assert all(r.final_metadata["grade"]["progress"] is False for r in finished)


def test_in_suite_v1_the_right_finish_alone_solves_a_trap() -> None:
    """Suite v1 (kept reproducible) credits the right finish alone; v2 asks for evidence
    (tests/calendar/test_validity.py)."""
    task = load_suite("1").get("t4-ambig-no-time")
    agent = _Scripted("clarify", [{**FINISH_NOW, "arguments": {
        "status": "needs_clarification", "summary": "Which day?"}}])  # fmt: skip
    (record,) = run_evaluation(
        CalendarEnv,
        agent,
        specs("1", tasks=[task.id], phrasings=["natural"], error_modes=["plain"]),
    ).records
    assert record.success and record.reward_final == 1.0


def _lines(folder: Path) -> list[dict[str, Any]]:
    out = []
    for line in (folder / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        data.pop("timing")
        out.append(data)
    return out


def test_same_seeds_give_identical_episodes_apart_from_timings(tmp_path: Path) -> None:
    chosen = specs(tiers=["T2", "T3", "T4"], phrasings=["natural"], seed=3)
    for run in ("a", "b"):
        run_evaluation(CalendarEnv, NaiveAgent(), chosen, out=tmp_path / run, concurrency=8)
    first, second = _lines(tmp_path / "a"), _lines(tmp_path / "b")
    assert first == second
    assert len(first) == len(chosen)
    assert any(r["final_metadata"]["failures"] for r in first)  # errors, retries: not trivial
