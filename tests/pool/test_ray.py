"""RayProvider on a real local Ray: actors serve, are found, die, are replaced and killed.

Marked `ray` (`just test-ray` installs Ray into the venv). One local Ray for the module.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pool_helpers import GateAgent, member_of

from calendar_gym.agents import OracleAgent
from calendar_gym.suite import specs as calendar_specs
from helpers.wait import await_until
from mcpgym.client import EnvClient
from mcpgym.harness.eval.cli import main
from mcpgym.harness.eval.runner import evaluate
from mcpgym.pool import EnvPool
from mcpgym.providers import ProviderError

pytestmark = [pytest.mark.ray, pytest.mark.server, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def _provider(target: str = "calendar_gym:CalendarEnv", **options: Any) -> Any:
    from mcpgym.providers.ray import RayProvider

    return RayProvider(target, **options)


def _names(ray: Any, run_id: str) -> list[str]:
    found = ray.util.list_named_actors(all_namespaces=True)
    return [a["name"] for a in found if run_id in a["name"]]


async def test_actors_serve_on_their_own_ports_and_are_killed_on_stop(ray: Any) -> None:
    provider = _provider("mcpgym.examples.guess:GuessEnv")
    async with provider:
        handles = await asyncio.gather(*(provider.start() for _ in range(2)))
        assert len({h.base_url for h in handles}) == 2
        assert all(h.base_url.startswith("http://127.0.0.1:") for h in handles)
        assert {h.meta["pid"] for h in handles}.isdisjoint({os.getpid()})  # in the actors
        for h in handles:
            async with EnvClient(h.base_url) as env:
                await env.reset(seed=2)
                assert (await env.call_tool("guess", n=10)).error is None
        assert sorted(_names(ray, provider.run_id)) == sorted(h.id for h in handles)
        assert await provider.alive(handles[0]) is True
        await provider.stop(handles[0])
        await provider.stop(handles[0])  # idempotent
        assert _names(ray, provider.run_id) == [handles[1].id]
    assert _names(ray, provider.run_id) == []
    assert ray.is_initialized()  # Ray was not ours to shut down


async def test_an_actor_that_cannot_serve_is_a_provider_error(ray: Any) -> None:
    provider = _provider("no_such_module_xyz:Env")
    with pytest.raises(ProviderError, match="did not start"):
        await provider.start()
    assert _names(ray, provider.run_id) == []


async def test_calendar_eval_over_four_actors_survives_a_killed_actor(
    ray: Any, tmp_path: Path
) -> None:
    specs = calendar_specs()[:60]
    provider = _provider()
    async with EnvPool(provider, size=4, health_interval_s=0.5) as pool:
        agent = GateAgent(OracleAgent(), hold=8)
        run = asyncio.create_task(evaluate(pool, agent, specs, concurrency=8, out=tmp_path))
        await asyncio.wait_for(agent.held.wait(), 120)
        assert sorted(m.active for m in pool.members) == [2, 2, 2, 2]
        victim = pool.members[0]
        os.kill(int(victim.handle.meta["pid"]), signal.SIGKILL)  # the actor's worker dies

        async def retired() -> bool:
            return victim in pool.retired

        await await_until(retired, within=60, what="the dead actor is retired")
        await pool.wait_full(120)
        agent.gate.set()
        result = await asyncio.wait_for(run, 240)
        replacement = member_of(pool, victim.slot, generation=1)
    summary = result.summary
    assert [r.spec_id for r in result.records] == [s.id for s in specs]
    assert summary["success_rate"] == 1.0 and summary["errors"] == 0
    infra = summary["infrastructure"]
    assert infra["errors"] == 2 and infra["retried"] == 2 and infra["unrecovered"] == 0
    assert infra["pool"]["replacements"] == 1 and replacement.served > 0
    assert _names(ray, provider.run_id) == []  # every actor killed on shutdown


def test_cli_ray_pool(ray: Any, tmp_path: Path) -> None:
    args = ["eval", "--env", "mcpgym.examples.guess:GuessEnv", "--pool", "ray:2", "--quiet"]
    assert main([*args, "--episodes", "6", "--max-steps", "4", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    members = summary["infrastructure"]["pool"]["members"]
    assert summary["run"]["environment"] == "mcpgym.examples.guess:GuessEnv" and len(members) == 2
    assert summary["run"]["pool"] == "ray:2"
    assert sum(m["served"] for m in members) == 6
