"""A server `mcpgym.from_env` started goes away when the script that owns it is SIGKILLed
(issue 29): no `atexit`, finalizer or `finally` runs then, so the server watches its owner
(`MCPGYM_OWNER`, see `mcpgym.runtime.proctree.watch_owner`) and shuts down by itself."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from helpers.wait import wait_until
from mcpgym.runtime.proctree import alive

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

SCRIPT = """
import os, signal
import mcpgym
from mcpgym.runtime.proctree import descendants
env = mcpgym.from_env("guess")
env.reset(seed=1)
print(env.url, *descendants(os.getpid()), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # the owner dies: nothing of its own can clean up
"""


def _answers(url: str) -> bool:
    try:
        return httpx.get(url + "/health", timeout=2.0, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_sigkilled_owner_leaves_no_from_env_server() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=150
    )
    assert out.returncode == -9, out.stderr  # it really died by SIGKILL
    url, *pids = out.stdout.split()
    assert pids, "from_env started no child process"
    wait_until(lambda: not any(alive(int(p)) for p in pids), timeout=30, what="the server to exit")
    assert not _answers(url)
