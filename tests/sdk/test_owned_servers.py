"""A client that started its own server stops it even when nobody closes the client: at
interpreter exit (and when the client is collected), with a `ResourceWarning` naming the leak
(issue 29: an unclosed `mcpgym.from_env` left its server process running after the script)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers.wait import wait_until

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

SCRIPT = """
import mcpgym
env = mcpgym.from_env("guess")
env.reset(seed=1)
print(env._stopper.__self__._proc.pid, flush=True)
"""  # and exits without env.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_an_unclosed_from_env_stops_its_server_at_exit_with_a_resource_warning() -> None:
    out = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split()[-1])
    wait_until(lambda: not _alive(pid), timeout=30, what="the server to be stopped")
    assert "ResourceWarning: from_env('guess') was not closed" in out.stderr, out.stderr


def test_a_closed_from_env_warns_nothing() -> None:
    script = SCRIPT + "env.close()\n"
    out = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", script],
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert out.returncode == 0, out.stderr
    assert "was not closed" not in out.stderr
    assert not _alive(int(out.stdout.split()[-1]))


ASYNC_SCRIPT = """
import asyncio, os
from mcpgym.client import EnvClient
from mcpgym.providers.process import ProcessProvider
from mcpgym.runtime.proctree import descendants

async def main():
    env = await EnvClient.from_provider(ProcessProvider("mcpgym.examples.guess:GuessEnv"))
    await env.reset(seed=1)
    print(*descendants(os.getpid()), flush=True)  # and returns without await env.close()

asyncio.run(main())
"""


def test_an_unclosed_async_client_is_named_and_its_server_goes_with_the_process() -> None:
    out = subprocess.run(
        [sys.executable, "-W", "always::ResourceWarning", "-c", ASYNC_SCRIPT],
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert out.returncode == 0, out.stderr
    assert "ResourceWarning: EnvClient(http://127.0.0.1:" in out.stderr, out.stderr
    assert "was not closed: await close() or use `async with`" in out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert pids
    wait_until(lambda: not any(_alive(p) for p in pids), timeout=30, what="the server to exit")
