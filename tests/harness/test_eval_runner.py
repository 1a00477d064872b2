"""The evaluation runner in process: scale, determinism, resume, limits, outcomes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import Bisect, PacedGuess, Scripted, VerdictGuess, secret

from mcpgym import Environment, Observation, State
from mcpgym.examples.guess import GuessEnv
from mcpgym.harness.agents import RandomAgent
from mcpgym.harness.episodes import EpisodeRecord, EpisodeSpec, repeat, seeded_specs
from mcpgym.harness.eval.runner import evaluate
from mcpgym.harness.eval.store import EpisodeStore


def lines_without_timing(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines():
        data = json.loads(line)
        data.pop("timing")
        out.append(data)
    return out


async def test_200_episodes_at_concurrency_16_complete_without_errors(tmp_path: Path) -> None:
    agent = Bisect()
    specs = seeded_specs(200, seed=1000, max_steps=10)
    started = time.monotonic()
    result = await evaluate(GuessEnv, agent, specs, out=tmp_path, concurrency=16)
    assert time.monotonic() - started < 30
    assert result.played == 200 and len(result.records) == 200
    assert [r.spec_id for r in result.records] == [s.id for s in specs]
    assert {r.done_reason for r in result.records} == {"done"}
    assert all(r.success and r.error is None for r in result.records)
    s = result.summary
    assert (s["episodes"], s["success_rate"], s["errors"], s["tool_errors"]) == (200, 1.0, 0, {})
    assert s["reward"] == {"mean": 1.0, "stderr": 0.0}
    assert 1 <= s["turns"]["mean"] <= 7
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 200


async def test_concurrency_is_bounded() -> None:
    active = 0
    peak = 0

    async def behaviour(turn: int, result: Any) -> Any:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0)  # let the other episodes run their turns
        active -= 1
        return None

    await evaluate(GuessEnv, Scripted(behaviour), seeded_specs(40), concurrency=5)
    assert peak == 5


async def test_same_seeds_give_identical_episodes_apart_from_timing(tmp_path: Path) -> None:
    specs = repeat(seeded_specs(30, seed=7, max_steps=6), 2)
    for run in ("a", "b"):
        await evaluate(GuessEnv, RandomAgent(seed=3), specs, out=tmp_path / run, concurrency=8)
    a = lines_without_timing(tmp_path / "a" / "episodes.jsonl")
    b = lines_without_timing(tmp_path / "b" / "episodes.jsonl")
    assert a == b
    assert [r["spec_id"] for r in a] == [s.id for s in specs]  # spec order, not finish order
    assert {r["done_reason"] for r in a} >= {"max_steps"}
    assert any(r["calls"] for r in a)
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    other = json.loads((tmp_path / "b" / "summary.json").read_text())
    summary.pop("timing"), other.pop("timing")
    assert summary == other


async def test_a_rerun_plays_only_the_missing_episodes(tmp_path: Path) -> None:
    specs = seeded_specs(12, max_steps=10)
    first = await evaluate(GuessEnv, Bisect(), specs[:5], out=tmp_path)
    with (tmp_path / "episodes.jsonl").open("a") as fh:
        fh.write(first.records[0].model_dump_json()[:40])  # a write cut short by a kill
    agent = Bisect()
    result = await evaluate(GuessEnv, agent, specs, out=tmp_path, concurrency=3)
    assert sorted(agent.started) == sorted(s.id for s in specs[5:])
    assert result.played == 7 and len(result.records) == 12
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(line)["spec_id"] for line in lines] == [s.id for s in specs]
    again = Bisect()
    assert (await evaluate(GuessEnv, again, specs, out=tmp_path)).played == 0
    assert again.started == []


async def test_an_out_folder_of_another_agent_is_refused(tmp_path: Path) -> None:
    await evaluate(GuessEnv, Bisect(), seeded_specs(2), out=tmp_path)
    with pytest.raises(ValueError, match="holds episodes of agent 'bisect'"):
        await evaluate(GuessEnv, RandomAgent(), seeded_specs(3), out=tmp_path)


async def test_duplicate_spec_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="repeated: a"):
        await evaluate(GuessEnv, Bisect(), [EpisodeSpec(id="a"), EpisodeSpec(id="a")])


# -- how episodes end ------------------------------------------------------------------------------


async def one(agent: Any, spec: EpisodeSpec | None = None, env: Any = GuessEnv, **kw: Any) -> Any:
    result = await evaluate(env, agent, [spec or EpisodeSpec(id="e", reset={"seed": 5})], **kw)
    return result.records[0]


async def test_agent_stopped_and_max_steps() -> None:
    stopped = await one(Scripted(lambda turn, r: None))
    assert (stopped.done_reason, stopped.turns, stopped.steps) == ("agent_stopped", 1, 0)
    assert not stopped.success
    call = {"type": "call_tool", "tool_name": "hint", "arguments": {}}
    limited = await one(Scripted(lambda turn, r: call), EpisodeSpec(id="m", max_steps=3))
    assert (limited.done_reason, limited.steps, limited.tool_calls) == ("max_steps", 3, 3)


async def test_turn_timeout_ends_the_episode_and_closes_the_agent() -> None:
    agent = Scripted(lambda turn, r: asyncio.Event().wait())
    record = await one(agent, turn_timeout=0.05)
    assert record.done_reason == "turn_timeout" and "0.05 s" in (record.error or "")
    assert agent.closed == 1 and not record.success


async def test_episode_timeout_bounds_the_whole_episode() -> None:
    async def slow(turn: int, result: Any) -> Any:
        await asyncio.sleep(0.02)
        return {"type": "call_tool", "tool_name": "hint", "arguments": {}}

    record = await one(
        Scripted(slow), EpisodeSpec(id="t", max_steps=1000), episode_timeout=0.15, turn_timeout=5
    )
    assert record.done_reason == "episode_timeout"
    assert 1 <= record.steps < 20


async def test_an_episode_that_never_suspends_still_meets_its_deadline() -> None:
    """A sync agent on in-process sync tools awaits nothing that suspends: the episode deadline
    (and every other task, and Ctrl-C's cancellation) still gets the loop once per turn."""
    call = {"type": "call_tool", "tool_name": "hint", "arguments": {}}
    record = await one(
        Scripted(lambda turn, r: call if turn < 300_000 else None),
        EpisodeSpec(id="t", max_steps=1_000_000),
        episode_timeout=0.2,
        turn_timeout=5,
    )
    assert record.done_reason == "episode_timeout", (record.done_reason, record.steps)


async def test_cancelling_a_run_of_never_suspending_episodes_ends_it_promptly() -> None:
    """What Ctrl-C does to `mcpgym eval` (asyncio cancels the main task): the run ends within
    a turn, even when no episode ever suspends on its own."""
    call = {"type": "call_tool", "tool_name": "hint", "arguments": {}}
    agent = Scripted(lambda turn, r: call if turn < 300_000 else None)
    specs = [EpisodeSpec(id=f"e{i}", max_steps=1_000_000) for i in range(4)]
    run = asyncio.ensure_future(evaluate(GuessEnv, agent, specs, concurrency=2))
    await asyncio.sleep(0.05)
    started = time.monotonic()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert time.monotonic() - started < 1.0


async def test_agent_and_environment_errors_are_recorded_not_raised() -> None:
    def boom(turn: int, result: Any) -> Any:
        raise RuntimeError("agent bug")

    record = await one(Scripted(boom))
    assert record.done_reason == "error" and record.error == "RuntimeError: agent bug"

    class BrokenReset(Environment[Any, Observation, State]):
        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
            raise ValueError("no world today")

    record = await one(Bisect(), env=BrokenReset)
    assert record.done_reason == "error" and "no world today" in (record.error or "")
    bad_action = await one(Scripted(lambda turn, r: {"type": "dance"}))
    assert bad_action.done_reason == "error" and "invalid action" in (bad_action.error or "")


async def test_tool_calls_and_errors_are_recorded_for_classifiers() -> None:
    moves = [
        {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 500}},
        {"type": "call_tool", "tool_name": "guess", "arguments": {"n": "many"}},
        {"type": "call_tool", "tool_name": "gues", "arguments": {}},
        {"type": "list_tools"},
        {"type": "call_tool", "tool_name": "guess", "arguments": {"n": secret(5)}},
    ]
    record = await one(Scripted(lambda turn, r: moves[turn - 1]))
    assert (record.done_reason, record.success, record.steps, record.tool_calls) == (
        "done",
        True,
        5,
        4,
    )
    assert record.tool_errors == {"execution_error": 1, "invalid_args": 1, "tool_not_found": 1}
    assert [(c.step, c.tool, c.error_type) for c in record.calls] == [
        (1, "guess", "execution_error"),
        (2, "guess", "invalid_args"),
        (3, "gues", "tool_not_found"),
        (5, "guess", None),
    ]
    assert "outside" in record.calls[0].error["message"]
    assert record.calls[3].result == {"verdict": "correct", "guesses": 1}
    assert record.reward_total == pytest.approx(-0.3 + 0.0 + 1.0)


async def test_success_is_the_environments_verdict_when_it_gives_one() -> None:
    specs = [EpisodeSpec(id=f"v{s}", reset={"seed": s}, tags={"seed": str(s)}) for s in range(8)]
    result = await evaluate(VerdictGuess, Bisect(), specs)
    for r in result.records:
        assert r.reward_final == 1.0
        assert r.success == (r.final_metadata["grade"]["guesses"] <= 3)
    assert 0 < result.summary["success_rate"] < 1


async def test_async_start_and_reset_options() -> None:
    seen: list[Any] = []

    class AsyncStart(Bisect):
        async def start(self, spec: EpisodeSpec, tools: Any) -> Any:  # type: ignore[override]
            await asyncio.sleep(0)
            return super().start(spec, tools)

    class Recording(GuessEnv):
        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
            seen.append((seed, episode_id, kw))
            return super().reset(seed=seed, episode_id=episode_id, **kw)

    spec = EpisodeSpec(id="o", reset={"seed": 2, "low": 1, "high": 100}, max_steps=10)
    record = await one(AsyncStart(), spec, env=Recording)
    assert seen == [(2, "o", {"low": 1, "high": 100})]
    assert record.success


async def test_paced_environment_and_progress_reporter() -> None:
    class Reporter:
        def __init__(self) -> None:
            self.events: list[Any] = []

        def start(self, total: int, done: int) -> None:
            self.events.append(("start", total, done))

        def advance(self, stats: Any) -> None:
            self.events.append(("advance", stats.done, stats.errors))

        def stop(self) -> None:
            self.events.append(("stop",))

    reporter = Reporter()
    await evaluate(PacedGuess, Bisect(), seeded_specs(3), progress=reporter, concurrency=2)
    assert reporter.events[0] == ("start", 3, 0) and reporter.events[-1] == ("stop",)
    assert [e[1] for e in reporter.events[1:-1]] == [1, 2, 3]


def test_records_survive_the_store_round_trip(tmp_path: Path) -> None:
    record = EpisodeRecord(spec_id="x", group="x", agent="a", done_reason="done", tags={"t": "1"})
    store = EpisodeStore(tmp_path / "e.jsonl")
    store.append(record)
    store.close()
    assert EpisodeStore(tmp_path / "e.jsonl").load() == {"x": record}
