"""`EnvClient.from_docker_image` / `from_provider` (the client owns its container), and images
that travel through a real OCI registry: push, remove locally, start from the registry."""

from __future__ import annotations

import pytest

from container_engines import Engine
from mcpgym.client import EnvClient, SyncEnvClient
from mcpgym.examples.guess import GuessState
from mcpgym.providers.base import ProviderError
from mcpgym.providers.image import push_image

pytestmark = pytest.mark.timeout(900)


async def test_from_docker_image_owns_and_removes_its_container(
    engine: Engine, guess_image: str
) -> None:
    env = await EnvClient.from_docker_image(
        guess_image,
        provider_options={"engine": engine.host, "run_id": "fromimage1"},
        state_type=GuessState,
    )
    try:
        assert len(engine.managed("fromimage1")) == 1
        await env.reset(seed=3)
        obs = await env.call_tool("guess", n=50)
        assert obs.error is None
        assert (await env.state()).guesses == [50]
    finally:
        await env.close()
    assert engine.managed("fromimage1") == []
    await env.close()  # idempotent


def test_sync_from_provider_stops_the_server_on_close(engine: Engine, guess_image: str) -> None:
    provider = engine.provider(guess_image).sync()
    try:
        with SyncEnvClient.from_provider(provider, state_type=GuessState) as env:
            run = provider.provider.run_id
            assert len(engine.managed(run)) == 1
            env.reset(seed=1)
            assert env.call_tool("guess", n=10).error is None
        assert engine.managed(run) == []
        with SyncEnvClient.from_provider(provider) as env:  # the provider is still usable
            env.reset(seed=2)
    finally:
        provider.close()
    assert engine.managed(run) == []


async def test_push_remove_and_start_from_the_registry(
    engine: Engine, guess_image: str, registry: str
) -> None:
    local = f"mcpgym-regtest-{engine.name}:1"
    engine.client.images.get(guess_image).tag(f"mcpgym-regtest-{engine.name}", "1")
    ref = push_image(local, registry, engine=engine.host)
    assert ref == f"{registry}/mcpgym-regtest-{engine.name}:1"
    for name in (ref, local):
        engine.client.images.remove(name)
    assert not engine.client.images.list(name=ref)

    async with engine.provider(ref, pull="never") as provider:
        with pytest.raises(ProviderError, match="not found"):
            await provider.start()
    async with engine.provider(ref) as provider:  # pull="missing": fetched from the registry
        handle = await provider.start()
        async with EnvClient(handle.base_url, timeout=60) as env:
            await env.reset(seed=5)
            assert (await env.call_tool("guess", n=1)).error is None
    assert engine.client.images.list(name=ref)
    assert engine.managed(provider.run_id) == []
    engine.client.images.remove(ref)


async def test_pulling_an_image_the_registry_lacks_is_a_provider_error(
    engine: Engine, registry: str
) -> None:
    async with engine.provider(f"{registry}/no-such-image:1") as provider:
        with pytest.raises(ProviderError, match="cannot pull"):
            await provider.start()
        assert engine.managed(provider.run_id) == []
