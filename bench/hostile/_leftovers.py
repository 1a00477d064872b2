"""`bench/reliability.py leftovers`: what survives a SIGKILL of an owner.

- `mcpgym eval --pool process:3`: killed once its three servers answer; every process it started
  (found by its labels' owner pid and by walking its tree beforehand) must be gone.
- a bridge host: a process hosting a bridge worker whose foreign library started a plain child,
  a `setsid` child and an orphaned `setsid` daemon (tests/bridge/fixtures' lifecycle backend,
  under this Python); killed mid-call, its worker's whole family must be gone.

Both count what they started first: a figure of 0 left over from 0 started would measure nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from hostile._stall import Figures, judge, require
from mcpgym.providers.base import LABEL_OWNER_PID
from mcpgym.providers.process import labelled_processes
from mcpgym.runtime.proctree import alive, descendants

ROOT = Path(__file__).resolve().parents[2]
LIFECYCLE = ROOT / "tests" / "bridge" / "fixtures" / "lifecycle_worker.py"
HOST = textwrap.dedent(
    """
    import json, sys, threading
    from mcpgym.integrations.bridge import WorkerProcess
    worker = WorkerProcess(sys.executable, "lifecycle", "x:y", start_timeout_s=60)
    worker.argv[2] = sys.argv[1]
    worker.start()
    worker.request("reset", {}, 60)
    pids = worker.request("call", {"name": "spawn", "arguments": {}}, 60)["result"]["output"]
    call = {"name": "hang", "arguments": {}}
    threading.Thread(target=worker.request, args=("call", call, 600), daemon=True).start()
    print(json.dumps([worker.pid, *pids]), flush=True)
    sys.stdin.read()
    """
)


def _wait_gone(pids: set[int], within_s: float) -> tuple[set[int], float]:
    started = time.monotonic()
    while time.monotonic() - started < within_s:
        left = {p for p in pids if alive(p)}
        if not left:
            return left, time.monotonic() - started
        time.sleep(0.1)
    return {p for p in pids if alive(p)}, time.monotonic() - started


def _eval_pool() -> Figures:
    out = Path(tempfile.mkdtemp(prefix="mcpgym-bench-eval-"))
    cmd = [sys.executable, "-m", "mcpgym.servers", "eval", "--env",
           "mcpgym.examples.guess:GuessEnv", "--pool", "process:3", "--episodes", "100000",
           "--concurrency", "3", "--quiet", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    servers: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(servers) < 3:
        servers = {
            p.pid for p in labelled_processes() if p.labels.get(LABEL_OWNER_PID) == str(proc.pid)
        }
        time.sleep(0.2)
    time.sleep(2.0)  # episodes running on all three
    family = set(descendants(proc.pid)) | servers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    require(len(servers) == 3, f"the eval started {len(servers)} pool servers, not 3")
    left, took = _wait_gone(family, 30.0)
    for pid in left:  # never leave them to the next run
        os.kill(pid, signal.SIGKILL)
    return [
        ("SIGKILL of mcpgym eval --pool process:3: processes it had", str(len(family))),
        ("  left after 30 s", judge(f"{len(left)} (all gone in {took:.1f} s)", "0", not left)),
    ]


def _bridge_host() -> Figures:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(LIFECYCLE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert host.stdout is not None and host.stdin is not None
    pids = set(json.loads(host.stdout.readline()))
    require(
        len(pids) == 4 and all(alive(p) for p in pids), "the bridge host's family did not start"
    )
    os.kill(host.pid, signal.SIGKILL)
    host.wait()
    host.stdin.close()
    host.stdout.close()
    left, took = _wait_gone(pids, 30.0)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return [
        ("SIGKILL of a bridge host mid-call: worker + its 3 children", str(len(pids))),
        ("  left after 30 s", judge(f"{len(left)} (all gone in {took:.1f} s)", "0", not left)),
    ]


async def leftovers(_: object) -> Figures:
    """Both owners, one after the other."""
    return [*_eval_pool(), *_bridge_host()]
