"""Sixteen containers at once: an episode over /ws and a production /mcp call in each, then a
clean stop (each under 2 s, every container gone by listing, no networks or volumes left)."""

from __future__ import annotations

import asyncio
import time

import pytest

from container_engines import Engine
from mcpgym.client import EnvClient
from mcpgym.examples.guess import GuessEnv
from mcpgym.mcp_client import MCPToolClient
from mcpgym.providers._engine import listed
from mcpgym.providers.base import ServerHandle

pytestmark = pytest.mark.timeout(900)
N = 16


async def _episode(url: str, seed: int) -> int:
    """Binary search to the secret over /ws; returns the number of guesses."""
    async with EnvClient.for_env(GuessEnv, url, timeout=120) as env:
        await env.reset(seed=seed)
        low, high = 1, 100
        for n_guesses in range(1, 10):
            mid = (low + high) // 2
            obs = await env.call_tool("guess", n=mid)
            assert obs.error is None, obs.error
            verdict = obs.result["verdict"]
            if verdict == "correct":
                assert obs.done and obs.reward == 1.0
                state = await env.state()
                assert state.solved and state.guesses[-1] == mid
                return n_guesses
            low, high = (mid + 1, high) if verdict == "higher" else (low, mid - 1)
    raise AssertionError("binary search did not finish in 9 guesses")


async def _mcp_call(url: str) -> None:
    async with MCPToolClient(url, mode="production", timeout=120) as tools:
        names = {t.name for t in await tools.list_tools()}
        assert names == {"guess", "hint"}  # a simulation server: its mode's tools on /mcp
        obs = await tools.call_tool("guess", {"n": 50})
        assert obs.error is None and obs.result["verdict"] in {"higher", "lower", "correct"}


async def test_sixteen_containers_episodes_mcp_and_clean_stop(
    engine: Engine, guess_image: str
) -> None:
    networks = {n.name for n in engine.client.networks.list()}
    volumes = {v.name for v in engine.client.volumes.list()}
    provider = engine.provider(guess_image, health_deadline_s=300)
    async with provider:
        t0 = time.perf_counter()
        handles: list[ServerHandle] = await asyncio.gather(*(provider.start() for _ in range(N)))
        print(f"\n{engine.name}: {N} containers healthy in {time.perf_counter() - t0:.1f}s")
        assert len({h.base_url for h in handles}) == N
        assert len(engine.managed(provider.run_id)) == N
        for h in handles:
            assert h.base_url.startswith("http://127.0.0.1:")
        guesses = await asyncio.gather(
            *(_episode(h.base_url, seed=i) for i, h in enumerate(handles))
        )
        assert all(1 <= g <= 7 for g in guesses)
        await asyncio.gather(*(_mcp_call(h.base_url) for h in handles))

        async def timed_stop(h: ServerHandle) -> float:
            t = time.perf_counter()
            await provider.stop(h)
            return time.perf_counter() - t

        # Stop one at a time so each figure is that container's own stop time.
        times = [await timed_stop(h) for h in handles]
        print(f"{engine.name}: stop p50 {sorted(times)[N // 2]:.2f}s max {max(times):.2f}s")
        assert max(times) < 2.0, times
        assert provider.handles == []
    for h in handles:  # removal verified by listing with an exact name filter
        assert listed(engine.client, {"name": f"^/?{h.id}$"}) == []
    assert engine.managed(provider.run_id) == []
    assert {n.name for n in engine.client.networks.list()} == networks
    assert {v.name for v in engine.client.volumes.list()} == volumes


async def test_stop_is_idempotent_and_survives_an_externally_removed_container(
    engine: Engine, guess_image: str
) -> None:
    async with engine.provider(guess_image) as provider:
        handle = await provider.start()
        engine.client.containers.get(handle.id).remove(force=True)
        await provider.stop(handle)  # already gone: no error
        await provider.stop(handle)
        await provider.stop("no-such-container")
        assert engine.managed(provider.run_id) == []


async def test_a_server_that_exits_fails_fast_with_its_logs(
    engine: Engine, guess_image: str
) -> None:
    from mcpgym.providers.base import ProviderError

    # A bad serve flag makes `mcpgym serve` exit at once: the provider must say so, not wait.
    provider = engine.provider(guess_image, serve_args=["--max-sessions", "not-a-number"])
    async with provider:
        t = time.perf_counter()
        with pytest.raises(ProviderError, match="before healthy") as info:
            await provider.start()
        assert time.perf_counter() - t < 30
        assert "max-sessions" in str(info.value)
    assert engine.managed(provider.run_id) == []
