"""`mcpgym eval` over a process pool: Calendar episodes survive a server killed mid-run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest
from pool_helpers import GateAgent, member_of

from calendar_gym.agents import OracleAgent
from calendar_gym.suite import specs as calendar_specs
from helpers.wait import await_until
from mcpgym.examples.guess import GuessEnv  # noqa: F401  (served by the CLI test)
from mcpgym.harness.agents import RandomAgent
from mcpgym.harness.episodes import seeded_specs
from mcpgym.harness.eval.cli import main
from mcpgym.harness.eval.runner import evaluate
from mcpgym.pool import EnvPool
from mcpgym.providers.process import ProcessProvider, labelled_processes

pytestmark = pytest.mark.server


async def _kill_busiest(pool: EnvPool) -> tuple[int, int]:
    """SIGKILL the member with most open sessions; wait until the pool replaced it."""
    victim = max(pool.members, key=lambda m: m.active)
    lost = victim.active
    os.kill(int(victim.handle.meta["pid"]), signal.SIGKILL)

    async def retired() -> bool:
        return victim in pool.retired

    await await_until(retired, within=30, what="the dead server is retired")
    await pool.wait_full(60)
    return victim.slot, lost


async def test_calendar_eval_over_process_pool_survives_a_killed_server(tmp_path: Path) -> None:
    specs = calendar_specs()[:60]
    provider = ProcessProvider("calendar_gym:CalendarEnv")
    async with EnvPool(provider, size=3, health_interval_s=0.2) as pool:
        agent = GateAgent(OracleAgent(), hold=8)
        run = asyncio.create_task(evaluate(pool, agent, specs, concurrency=8, out=tmp_path))
        await asyncio.wait_for(agent.held.wait(), 60)  # 8 episodes in flight on 3 servers
        assert sorted(m.active for m in pool.members) == [2, 3, 3]
        slot, lost = await _kill_busiest(pool)
        agent.gate.set()
        result = await asyncio.wait_for(run, 120)
        replacement = member_of(pool, slot, generation=1)
    summary = result.summary
    assert [r.spec_id for r in result.records] == [s.id for s in specs]  # every episode
    assert summary["success_rate"] == 1.0 and summary["errors"] == 0  # no agent failure
    infra = summary["infrastructure"]
    assert lost == 3 and infra["errors"] == lost and infra["retried"] == lost
    assert infra["unrecovered"] == 0 and summary["infra_errors"] == 0
    assert infra["pool"]["replacements"] == 1 and infra["pool"]["infra_errors"] == lost
    assert replacement.served > 0  # the replacement served later episodes
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 60 and all(json.loads(x)["done_reason"] == "done" for x in lines)
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["infrastructure"]["errors"] == lost
    assert list(labelled_processes(provider.run_id)) == []


async def test_exhausted_retries_are_infra_errors_and_a_resumed_run_replays_them(
    tmp_path: Path,
) -> None:
    specs = seeded_specs(12, seed=5, max_steps=6)
    async with EnvPool(ProcessProvider("mcpgym.examples.guess:GuessEnv"), size=2) as pool:
        agent = GateAgent(RandomAgent(seed=1), hold=4)
        run = asyncio.create_task(
            evaluate(pool, agent, specs, concurrency=4, out=tmp_path, infra_retries=0)
        )
        await asyncio.wait_for(agent.held.wait(), 60)
        _, lost = await _kill_busiest(pool)
        agent.gate.set()
        first = await asyncio.wait_for(run, 120)
    assert lost == 2
    assert first.summary["infra_errors"] == lost and first.summary["errors"] == 0
    assert first.summary["infrastructure"]["unrecovered"] == lost
    assert sum(r.done_reason == "infra_error" for r in first.records) == lost
    async with EnvPool(ProcessProvider("mcpgym.examples.guess:GuessEnv"), size=1) as pool:
        second = await evaluate(pool, RandomAgent(seed=1), specs, out=tmp_path)
    assert second.played == lost  # only the lost episodes are played again
    assert second.summary["infra_errors"] == 0
    assert all(r.done_reason != "infra_error" for r in second.records)


def test_cli_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["eval", "--env", "mcpgym.examples.guess:GuessEnv", "--pool", "process:2"]
    code = main([*args, "--episodes", "6", "--max-steps", "4", "--out", str(tmp_path)])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    # the report names the environment (issue 29: it named the pool), and the pool apart
    environment = "mcpgym.examples.guess:GuessEnv"
    assert summary["episodes"] == 6 and summary["run"]["environment"] == environment
    assert summary["run"]["pool"] == "process:2"
    report = (tmp_path / "report.md").read_text()
    assert f"# random on {environment}\n" in report and "| pool | process:2 |" in report
    pool = summary["infrastructure"]["pool"]
    assert sum(m["served"] for m in pool["members"]) == 6
    out, err = capsys.readouterr()
    assert "infrastructure errors" in out
    # the pool's start-up, one line per server on a non-terminal stderr (issue 29: 2.5 s blank)
    started = [line for line in err.splitlines() if line.startswith("mcpgym eval: starting: ")]
    assert len(started) == 2, err
    assert all(" ready at http://127.0.0.1:" in line for line in started)
    assert "\x1b" not in err  # nothing drawn for a terminal


async def test_a_library_pool_names_what_it_serves(tmp_path: Path) -> None:
    async with EnvPool(ProcessProvider("mcpgym.examples.guess:GuessEnv"), size=1) as pool:
        result = await evaluate(pool, RandomAgent(seed=1), seeded_specs(2, 0, max_steps=3))
    assert result.summary["run"]["environment"] == "mcpgym.examples.guess:GuessEnv"
    assert result.summary["run"]["pool"] == "process:1"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--env", "x:Y", "--pool", "process"], "KIND:N"),
        (["--env", "x:Y", "--pool", "process:0"], "KIND:N"),
        (["--env", "x:Y", "--pool", "nosuch:2"], "unknown provider kind"),
        (["--url", "http://127.0.0.1:1", "--pool", "process:2"], "not --url"),
        (["--image", "img", "--pool", "process:2"], "needs --env"),
        (["--image", "img"], "--image needs --pool"),
    ],
)
def test_cli_pool_bad_arguments(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", *extra, "--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_cli_pool_that_cannot_start(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--env", "no_such_module_xyz:Env", "--pool", "process:1", "--quiet"])
    assert code == 3
    assert "the pool did not start" in capsys.readouterr().err
