"""A harness that crashes while children it spawned keep its stdout open (one in its process
group, one in a session of its own): the crash is `harness_crashed` at once, not a turn timeout;
closing leaves no process and no file descriptor behind."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

import pytest
from conftest import AGENT, Leaks
from harness_envs import CallLogEnv

from mcpgym.harness.adapters import CliAdapter
from mcpgym.harness.adapters.process import HarnessProcess, descendants, marked
from mcpgym.harness.hosted.env import HarnessAction, HarnessEnvironment

pytestmark = pytest.mark.server


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def _turn(env: HarnessEnvironment, message: str) -> Any:
    return await env.astep(HarnessAction(message=message))


async def test_a_crash_behind_children_holding_stdout_is_seen_at_once(
    leaks: Leaks, harnesses: list[HarnessEnvironment]
) -> None:
    env = HarnessEnvironment(CallLogEnv, CliAdapter(AGENT), turn_timeout_s=60.0)
    harnesses.append(env)
    fds = _fds()
    for _ in range(3):  # several crashed episodes: nothing accumulates
        await env.areset()
        leaks.port(env.tools.port)
        spawned = await _turn(env, "spawn")
        pids = [int(p) for p in spawned.response.split(" | ")[0].split()[1:]]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        started = time.monotonic()
        crashed = await _turn(env, "die")
        took = time.monotonic() - started
        assert (crashed.done, crashed.termination) == (True, "harness_crashed"), crashed.error
        assert took < 10.0, f"the crash took {took:.1f} s to notice (turn timeout is 60 s)"
        assert "exit code 3" in (crashed.error or "")
        await env.aclose()
        assert not any(_alive(p) for p in pids), "a child of the crashed harness survived"
    assert _fds() <= fds, "file descriptors leaked by crashed episodes"


async def test_orphans_that_left_the_group_are_found_by_their_marker(leaks: Leaks) -> None:
    # The middle process starts a setsid grandchild and exits: the grandchild is orphaned
    # (reparented away from the harness, so no parent link leads to it any more).
    middle = (
        "import subprocess\n"
        "p = subprocess.Popen(['setsid', 'sleep', '300'])\n"
        "print(p.pid, flush=True)\n"
    )
    outer = (
        "import subprocess, sys, time\n"
        f"subprocess.run([sys.executable, '-c', {middle!r}])\n"
        "time.sleep(300)\n"
    )
    proc = await HarnessProcess.spawn([sys.executable, "-c", outer])
    try:
        line = await asyncio.wait_for(proc.readline(), 20.0)
        assert line is not None
        orphan = int(line)
        # the printed pid may still be between fork and exec: wait until /proc shows its marker
        deadline = time.monotonic() + 20.0
        while not (_alive(orphan) and orphan in marked(proc.tag)):
            assert time.monotonic() < deadline, "the grandchild never showed its marker"
            await asyncio.sleep(0.05)
        while orphan in descendants(proc.pid):  # until the middle process has exited
            assert time.monotonic() < deadline, "the middle process did not exit"
            await asyncio.sleep(0.05)
        assert _alive(orphan) and orphan in marked(proc.tag)  # found by its marker alone
    finally:
        await proc.kill(grace_s=2.0)
    assert not _alive(orphan)
    assert marked(proc.tag) == []
