"""EnvPool over real `mcpgym serve` processes: placement, death, replacement, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import pytest

from helpers.wait import await_until
from mcpgym.client import EnvClient
from mcpgym.errors import RemoteError
from mcpgym.pool import EnvPool, InfrastructureError, PoolMember, SyncEnvPool
from mcpgym.providers.process import ProcessProvider, labelled_processes

pytestmark = pytest.mark.server

GUESS = "mcpgym.examples.guess:GuessEnv"


def _kill(member: PoolMember) -> None:
    os.kill(int(member.handle.meta["pid"]), signal.SIGKILL)


def _pool(size: int, **options: object) -> EnvPool:
    return EnvPool(ProcessProvider(GUESS), size=size, health_interval_s=0.2, **options)  # type: ignore[arg-type]


async def test_sessions_are_spread_by_least_load_and_released() -> None:
    async with _pool(3) as pool, contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(pool.session()) for _ in range(9)]
        assert sorted(m.active for m in pool.members) == [3, 3, 3]
        urls = {c.url for c in clients}
        assert len(urls) == 3
        for env in clients:  # each session is its own episode on its server
            await env.reset(seed=4)
            assert (await env.call_tool("guess", n=50)).error is None
        await stack.aclose()
        assert [m.active for m in pool.members] == [0, 0, 0]
        assert [m.served for m in pool.members] == [3, 3, 3]
        # with free servers, the next session goes to the least-served one
        async with pool.session():
            assert sorted(m.active for m in pool.members) == [0, 0, 1]


async def test_a_dead_server_is_an_infrastructure_error_and_is_replaced() -> None:
    async with _pool(2) as pool:
        async with pool.session() as keep:
            await keep.reset(seed=1)
            victim = next(m for m in pool.members if m.active)
            with pytest.raises(InfrastructureError) as info:
                async with pool.session() as env:  # placed on the other, idle server
                    other = next(m for m in pool.members if m is not victim)
                    assert env.url.startswith(other.url.replace("http", "ws"))
                    await env.reset(seed=1)
                    _kill(other)
                    await env.call_tool("guess", n=50)
            assert info.value.member is other
            # the survivor's session is untouched
            assert (await keep.call_tool("guess", n=50)).error is None
        await pool.wait_full(30)
        stats = pool.stats()
        assert stats["infra_errors"] == 1 and stats["replacements"] == 1
        replacement = next(m for m in pool.members if m.slot == other.slot)
        assert replacement.generation == 1 and replacement.handle.id != other.handle.id
        assert [r["id"] for r in stats["retired"]] == [other.handle.id]
        # the replacement takes new sessions
        async with pool.session(), pool.session() as env:
            await env.reset(seed=2)
        assert replacement.served >= 1


async def test_the_health_check_retires_a_server_killed_while_idle() -> None:
    async with _pool(2) as pool:
        victim = pool.members[0]
        _kill(victim)

        async def retired() -> bool:
            return victim in pool.retired

        await await_until(retired, within=30, what="the health check retires the dead server")
        await pool.wait_full(30)
        assert victim in pool.retired and victim not in pool.members
        for _ in range(4):  # no session is ever placed on the dead server
            async with pool.session() as env:
                await env.reset(seed=3)
        assert victim.served == 0
        assert pool.stats()["infra_errors"] == 0  # nothing was lost


async def test_an_error_of_a_live_server_is_not_infrastructure() -> None:
    async with _pool(1) as pool:
        with pytest.raises(RemoteError):
            async with pool.session() as env:
                await env.reset(seed=1)
                await env.step({"type": "no_such_action"})
        assert pool.stats()["infra_errors"] == 0 and pool.retired == []


async def test_capacity_per_server_waits_then_times_out() -> None:
    async with _pool(1, max_sessions_per_server=1, acquire_timeout_s=0.5) as pool:
        async with pool.session():
            with pytest.raises(InfrastructureError, match="no healthy server"):
                await pool.acquire()
            waiter = asyncio.ensure_future(pool.acquire())
            await asyncio.sleep(0)  # the waiter is now queued on the condition
        placed = await asyncio.wait_for(waiter, 10)  # the freed slot goes to the waiter
        await placed.close()


async def test_clean_shutdown_leaves_no_process() -> None:
    provider = ProcessProvider(GUESS)
    async with EnvPool(provider, size=3) as pool:
        pids = [int(m.handle.meta["pid"]) for m in pool.members]
        async with pool.session() as env:
            await env.reset(seed=1)
    assert list(labelled_processes(provider.run_id)) == []
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(InfrastructureError, match="closed"):
        await pool.acquire()


async def test_a_pool_that_cannot_start_stops_what_it_started() -> None:
    provider = ProcessProvider("no_such_module_xyz:Env")
    with pytest.raises(Exception, match="exited"):
        async with EnvPool(provider, size=2):
            pass
    assert provider.handles == [] and list(labelled_processes(provider.run_id)) == []
    with pytest.raises(ValueError):
        EnvPool(provider, size=0)


def test_sync_twin() -> None:
    with SyncEnvPool(ProcessProvider(GUESS), size=2, health_interval_s=0.2) as pool:
        with pool.session() as a, pool.session() as b:
            assert a.url != b.url
            a.reset(seed=1)
            assert a.call_tool("guess", n=50).error is None
        with pytest.raises(InfrastructureError), pool.session() as env:
            env.reset(seed=1)
            _kill(next(m for m in pool.members if m.active))
            env.call_tool("guess", n=50)
        pool.wait_full(30)
        assert pool.stats()["replacements"] >= 1
        with pool.session() as env:
            env.reset(seed=2)


async def test_client_options_pass_through() -> None:
    async with _pool(1) as pool, pool.session(timeout=5.0) as env:
        assert isinstance(env, EnvClient)
        await env.reset(seed=1)
