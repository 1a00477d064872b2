"""SwarmProvider on a real single-node Docker Swarm: services serve, die, are replaced, removed.

Marked `swarm` (`just test-swarm`). The engine comes from `.ci/docker-engine.sh`, the base image
from `.ci/base-image.sh`; swarm mode is initialised through the SDK when the engine is not in it
and left at the end of the module only if this module entered it. Everything is named and
labelled with the provider's run id, so an engine shared with other tests is safe.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pool_helpers import GateAgent, member_of

from calendar_gym.agents import OracleAgent
from calendar_gym.suite import specs as calendar_specs
from helpers.wait import await_until
from mcpgym.harness.eval.cli import main
from mcpgym.harness.eval.runner import evaluate
from mcpgym.pool import EnvPool, make_provider
from mcpgym.providers import ProviderError
from mcpgym.providers._engine import connect
from mcpgym.providers.image import BuildSpec, build_image
from mcpgym.providers.swarm import SwarmProvider, ensure_swarm, leave_swarm

pytestmark = [pytest.mark.swarm, pytest.mark.server, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "mcpgym-swarm-calendar-gym:latest"


def _script(name: str, **env: str) -> str:
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / name)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **env},
        check=False,
    )
    assert proc.returncode == 0, f"{name} failed:\n{proc.stderr[-3000:]}"
    return proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def swarm() -> Iterator[tuple[str, Any]]:
    """(engine URL, SDK client) of an engine in swarm mode with the Calendar Gym image built."""
    host = _script("docker-engine.sh").removeprefix("export DOCKER_HOST=")
    base = _script("base-image.sh", DOCKER_HOST=host)
    client = connect(host)
    entered = ensure_swarm(client)
    try:
        build_image(
            BuildSpec(
                target="calendar_gym:CalendarEnv", tag=IMAGE, base=base, extras=("calendar",)
            ),
            engine=host,
        )
        yield host, client
    finally:
        if entered:  # leave only what this module entered: the docker suite runs without swarm
            leave_swarm(client)
        client.close()


def _managed(client: Any, run_id: str) -> tuple[list[Any], list[Any]]:
    """Services and containers labelled with `run_id` (listing, never error texts)."""
    label = {"label": f"io.mcpgym.run={run_id}"}
    return client.api.services(filters=label), client.api.containers(all=True, filters=label)


async def test_a_dead_task_is_replaced_on_the_same_url_and_removal_is_listed(
    swarm: tuple[str, Any],
) -> None:
    host, client = swarm
    async with SwarmProvider(IMAGE, engine=host) as provider:
        handle = await provider.start()
        spec = client.services.get(handle.id).attrs["Spec"]["TaskTemplate"]["ContainerSpec"]
        assert spec["CapabilityDrop"] == ["ALL"] and spec["ReadOnly"] is True
        assert spec["User"] not in ("", "0", "root") and spec["Init"] is True
        assert spec["Labels"]["io.mcpgym.run"] == provider.run_id
        ports = client.services.get(handle.id).attrs["Endpoint"]["Ports"]
        assert [p["PublishMode"] for p in ports] == ["host"]
        assert await provider.alive(handle) is None
        (first,) = provider.running_containers(handle)
        client.containers.get(first).kill()

        async def gone() -> bool:
            return await provider.alive(handle) is False

        await await_until(gone, within=30, what="the killed task is seen dead")

        async def restarted() -> bool:
            running = await asyncio.to_thread(provider.running_containers, handle)
            return bool(running) and first not in running

        await await_until(restarted, within=60, interval=0.1, what="Swarm starts a new task")
        await provider.wait_healthy(handle, 60)  # the same URL, served by the new task
        assert await provider.alive(handle) is None
        await provider.stop(handle)
        assert _managed(client, provider.run_id) == ([], [])
        await provider.stop(handle)  # idempotent


async def test_ingress_mesh_that_does_not_route_is_detected(swarm: tuple[str, Any]) -> None:
    host, client = swarm
    provider = SwarmProvider(IMAGE, engine=host, publish_mode="ingress", health_deadline_s=8)
    async with provider:
        with pytest.raises(ProviderError, match="routing mesh does not route"):
            await provider.start()
    assert _managed(client, provider.run_id) == ([], [])


async def test_missing_image_is_a_clear_error(swarm: tuple[str, Any]) -> None:
    host, client = swarm
    provider = SwarmProvider("mcpgym-swarm-no-such-image:never", engine=host)
    async with provider:
        with pytest.raises(ProviderError, match="not on the engine"):
            await provider.start()
    assert _managed(client, provider.run_id) == ([], [])


async def test_calendar_eval_over_swarm_pool_survives_a_killed_task(
    swarm: tuple[str, Any], tmp_path: Path
) -> None:
    host, client = swarm
    specs = calendar_specs()[:60]
    provider = make_provider("swarm", image=IMAGE, engine=host)
    assert isinstance(provider, SwarmProvider)
    async with EnvPool(provider, size=3, health_interval_s=0.2) as pool:
        agent = GateAgent(OracleAgent(), hold=8)
        run = asyncio.create_task(evaluate(pool, agent, specs, concurrency=8, out=tmp_path))
        await asyncio.wait_for(agent.held.wait(), 120)  # 8 episodes in flight on 3 services
        assert sorted(m.active for m in pool.members) == [2, 3, 3]
        victim = max(pool.members, key=lambda m: m.active)
        lost = victim.active
        (container,) = provider.running_containers(victim.handle)
        client.containers.get(container).kill()  # the task's container, as an engine fault would

        async def retired() -> bool:
            return victim in pool.retired

        await await_until(retired, within=30, what="the dead server is retired")
        await pool.wait_full(120)
        agent.gate.set()
        result = await asyncio.wait_for(run, 240)
        replacement = member_of(pool, victim.slot, generation=1)
    summary = result.summary
    assert [r.spec_id for r in result.records] == [s.id for s in specs]  # every episode
    assert summary["success_rate"] == 1.0 and summary["errors"] == 0  # no agent failure
    infra = summary["infrastructure"]
    assert lost == 3 and infra["errors"] == lost and infra["retried"] == lost
    assert infra["unrecovered"] == 0 and summary["infra_errors"] == 0
    assert infra["pool"]["replacements"] == 1
    assert replacement.served > 0  # the replacement served later episodes
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 60 and all(json.loads(x)["done_reason"] == "done" for x in lines)
    assert _managed(client, provider.run_id) == ([], [])  # every service and task removed


def test_cli_eval_pool_swarm(
    swarm: tuple[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, _ = swarm
    monkeypatch.setenv("DOCKER_HOST", host)
    args = ["eval", "--image", IMAGE, "--pool", "swarm:3", "--agent", "oracle", "--quiet"]
    tasks = ["--tasks", "calendar_gym.suite:specs", "--episodes", "6"]  # the oracle plays tasks
    assert main([*args, *tasks, "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == 6 and summary["success_rate"] == 1.0
    assert summary["run"]["environment"] == IMAGE and summary["run"]["pool"] == "swarm:3"
    members = summary["infrastructure"]["pool"]["members"]
    assert len(members) == 3 and sum(m["served"] for m in members) == 6
