"""The runner against a real server on 127.0.0.1: one WebSocket session per episode, the same
records as in process."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_helpers import Bisect

from helpers.server import run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.harness.agents import RandomAgent
from mcpgym.harness.episodes import seeded_specs
from mcpgym.harness.eval.cli import main
from mcpgym.harness.eval.runner import evaluate
from mcpgym.servers import create_app

pytestmark = pytest.mark.server


async def test_url_mode_gives_the_same_records_as_in_process(tmp_path: Path) -> None:
    specs = seeded_specs(24, seed=300, max_steps=8)
    local = await evaluate(GuessEnv, Bisect(), specs, concurrency=6)
    agent = Bisect()
    with run_server(create_app(GuessEnv)) as server:
        remote = await evaluate(server.url, agent, specs, out=tmp_path, concurrency=6)
        server.wait_for_sessions(0)  # every episode closed its session
    assert [r.deterministic_dump() for r in remote.records] == [
        r.deterministic_dump() for r in local.records
    ]
    assert remote.summary["success_rate"] == 1.0 and remote.summary["errors"] == 0
    assert agent.tools[0] == ["guess", "hint"]  # simulation-mode tools, listed without a step
    assert all(r.steps == r.tool_calls for r in remote.records)
    assert remote.summary["run"]["environment"] == server.url


async def test_random_agent_over_a_url_matches_in_process() -> None:
    specs = seeded_specs(10, seed=1, max_steps=5)
    local = await evaluate(GuessEnv, RandomAgent(seed=9), specs)
    with run_server(create_app(GuessEnv)) as server:
        remote = await evaluate(server.url, RandomAgent(seed=9), specs, concurrency=4)
    assert [r.deterministic_dump() for r in remote.records] == [
        r.deterministic_dump() for r in local.records
    ]


def test_cli_url_mode(tmp_path: Path) -> None:
    with run_server(create_app(GuessEnv)) as server:
        code = main(
            [
                "eval",
                "--url",
                server.url,
                "--agent",
                "eval_helpers:Bisect",
                "--episodes",
                "5",
                "--out",
                str(tmp_path),
                "--quiet",
            ]
        )
    assert code == 0
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 5


async def test_an_unreachable_server_fails_each_episode_cleanly() -> None:
    with run_server(create_app(GuessEnv)) as server:
        url = server.url
    result = await evaluate(url, Bisect(), seeded_specs(2))
    assert {r.done_reason for r in result.records} == {"error"}
    assert all("ServerGone" in (r.error or "") for r in result.records)
