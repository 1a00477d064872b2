"""ProcessProvider against real `mcpgym serve` subprocesses: ports, health, labels, stop."""

from __future__ import annotations

import asyncio
import os
import sys

import httpx
import pytest

from mcpgym.client import EnvClient
from mcpgym.errors import RemoteError
from mcpgym.providers import LABEL_RUN, ProviderError
from mcpgym.providers.process import ProcessProvider, labelled_processes

pytestmark = pytest.mark.server

GUESS = "mcpgym.examples.guess:GuessEnv"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_servers_start_on_distinct_ports_serve_and_stop() -> None:
    async with ProcessProvider(GUESS) as provider:
        handles = await asyncio.gather(*(provider.start() for _ in range(3)))
        urls = {h.base_url for h in handles}
        assert len(urls) == 3 and all(u.startswith("http://127.0.0.1:") for u in urls)
        for h in handles:
            async with EnvClient(h.base_url) as env:
                await env.reset(seed=1)
                obs = await env.call_tool("guess", n=50)
                assert obs.error is None
            assert await provider.alive(h) is True
        assert "Uvicorn running on" in await provider.logs(handles[0])
        # labels travel in the environment: a gc finds exactly this run's servers
        found = {p.pid: p.labels for p in labelled_processes(provider.run_id)}
        assert {h.meta["pid"] for h in handles} <= set(found)
        assert all(labels[LABEL_RUN] == provider.run_id for labels in found.values())
        pids = [h.meta["pid"] for h in handles]
        await provider.stop(handles[0])
        await provider.stop(handles[0])  # idempotent
        assert _gone(pids[0]) and not _gone(pids[1])
        assert await provider.alive(handles[0]) is None  # no longer ours
    assert all(_gone(p) for p in pids)
    assert list(labelled_processes(provider.run_id)) == []


@pytest.mark.parametrize(
    ("target", "expect"),
    [
        ("no_such_module_xyz:Env", "exited with code"),
        ("mcpgym.examples.guess:NoSuchAttr", "exited with code"),
        ("not-a-target", "exited with code"),
    ],
)
async def test_a_server_that_cannot_start_is_a_provider_error_with_its_output(
    target: str, expect: str
) -> None:
    async with ProcessProvider(target, health_deadline_s=30) as provider:
        with pytest.raises(ProviderError, match=expect) as info:
            await provider.start()
        assert provider.handles == []
    assert "error" in str(info.value).lower()


async def test_a_missing_interpreter_is_a_provider_error() -> None:
    provider = ProcessProvider(GUESS, python="/nonexistent/bin/python")
    with pytest.raises(ProviderError, match="cannot run"):
        await provider.start()


async def test_another_interpreter_and_serve_options_are_used() -> None:
    # the venv's python given explicitly, and a serve option that /health reports
    async with ProcessProvider(
        GUESS, python=sys.executable, serve_args=["--max-sessions", "3"]
    ) as provider:
        handle = await provider.start()
        clients = [EnvClient(handle.base_url) for _ in range(4)]
        try:
            for env in clients[:3]:
                await env.reset(seed=1)
            with pytest.raises(RemoteError) as info:
                await clients[3].reset(seed=1)
            assert info.value.remote_code == "CAPACITY_REACHED"
        finally:
            for env in clients:
                await env.close()


def test_uv_command_line() -> None:
    provider = ProcessProvider(GUESS, uv=True, uv_args=["--frozen"])
    cmd = provider.command()
    assert cmd[1:4] == ["run", "--frozen", "python"] and "--port" in cmd
    assert cmd[cmd.index("--port") + 1] == "0"


def test_sync_twin_starts_and_stops() -> None:
    with ProcessProvider(GUESS).sync() as provider:
        handle = provider.start()
        assert httpx.get(handle.base_url + "/health", timeout=5).status_code == 200
        pid = handle.meta["pid"]
    assert _gone(pid)
