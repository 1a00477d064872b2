"""Servers a provider started do not outlive their owner: SIGKILL the owning process and every
server shuts itself down (the `MCPGYM_OWNER` watch); what could not (a server stopped by a
signal, an older server) is found and stopped by `mcpgym providers gc`, which judges processes
by their labels' owner exactly as it judges containers, with or without a container engine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from helpers.mcp import MCPGYM
from helpers.wait import wait_until
from mcpgym.providers import LABEL_RUN
from mcpgym.providers.base import LABEL_MANAGED, LABEL_OWNER_PID
from mcpgym.providers.gc import collect_processes
from mcpgym.providers.process import LABELS_ENV
from mcpgym.runtime.proctree import alive, identity

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

OWNER = textwrap.dedent(
    """
    import asyncio, json, sys
    from mcpgym.providers.process import ProcessProvider

    async def main():
        provider = ProcessProvider("mcpgym.examples.guess:GuessEnv")
        handles = await asyncio.gather(*(provider.start() for _ in range(3)))
        print(json.dumps([h.meta["pid"] for h in handles]), flush=True)
        await asyncio.to_thread(sys.stdin.read)

    asyncio.run(main())
    """
)


def test_servers_stop_when_their_owner_is_sigkilled() -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None and owner.stdin is not None
    pids = json.loads(owner.stdout.readline())
    assert len(pids) == 3 and all(alive(p) for p in pids)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(timeout=10)
    owner.stdin.close()
    owner.stdout.close()
    wait_until(lambda: not any(alive(p) for p in pids), timeout=30, what="the servers to stop")


def _sleeper(owner_pid: int, run: str) -> subprocess.Popen[bytes]:
    labels = {LABEL_MANAGED: "1", LABEL_RUN: run, LABEL_OWNER_PID: str(owner_pid)}
    env = {**os.environ, LABELS_ENV: json.dumps(labels)}
    env.pop("MCPGYM_OWNER", None)
    cmd = [sys.executable, "-c", "import time; time.sleep(300)"]
    return subprocess.Popen(cmd, env=env, start_new_session=True)


def test_gc_stops_the_servers_of_dead_owners_only() -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = _sleeper(int(dead.stdout), "run-dead")
    live = _sleeper(os.getpid(), "run-live")
    try:
        wait_until(lambda: alive(orphan.pid) and alive(live.pid), timeout=10, what="sleepers")
        listed = collect_processes(dry_run=True)
        assert f"process {orphan.pid} (run run-dead)" in listed
        assert not any(str(live.pid) in line for line in listed)
        env = {k: v for k, v in os.environ.items() if k != "DOCKER_HOST"}
        # scoped to this run: a shared machine may hold other users' leftovers
        cli = subprocess.run(
            [*MCPGYM, "providers", "gc", "--run", "run-dead"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert cli.returncode == 0, cli.stderr
        assert f"removed process {orphan.pid} (run run-dead)" in cli.stdout
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        assert alive(live.pid)
        assert collect_processes(run="run-live", dry_run=True) == [
            f"process {live.pid} (run run-live)"
        ]
    finally:
        for proc in (orphan, live):
            proc.kill()
            proc.wait()


def test_owner_identity_names_one_process() -> None:
    mine = identity()
    assert mine.startswith(f"{os.getpid()}:") and not mine.endswith(":None")
    assert identity(os.getppid()) != mine
