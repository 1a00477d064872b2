"""The `code-sandbox` measurement: Code Gym's sandbox (bubblewrap) start, warm run and reset.

Figures (issue 30), each run checked by its output (a run that did not really run fails). Every
run is what `run_python(code=...)` runs: the runner's bootstrap with the runner mounted.
  start    a new session sandbox (warm: it starts its first run's sandbox at once) to its first
           result, back to back: p50 and p99 (goal p50 <= 50 ms)
  session  the same with an agent's pause between the two (`--think`, 0.2 s: an LLM's turn
           takes seconds), timed without the pause: what a session's first call waits
  cold     the same back to back without warm runs (every run starts its sandbox then)
  warm     a warm sandbox's run after a pause, beside a bare `subprocess.run([sys.executable,
           "-c", snippet])` (goal <= 1.5x), and beside the strict floor: the base interpreter
           with `-S`. The sandbox hides every site-packages, so a bare run that loads them
           (their `.pth` files) is slower than the sandbox on a host with many packages; `-S`
           loads none (no target, shown for honesty).
  reset    `Sandbox.reset()` of a warm sandbox whose workspace holds 100 files (goal <= 20 ms)

Runs in its own process (`python bench/code_sandbox.py --json`), bounded (well under 60 s).
Needs bubblewrap (`apt-get install -y bubblewrap`); without it the measurement reports why.
The load average is printed with the figures: on a shared machine it explains them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = str(Path(__file__).resolve())
SNIPPET = "print(sum(range(1000)))"
EXPECTED = "499500\n"
GOAL_START_MS, GOAL_WARM_RATIO, GOAL_RESET_MS = 50.0, 1.5, 20.0


def _q(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1e3


def measure(n: int, think_s: float = 0.2) -> dict[str, Any]:
    """Milliseconds: start (warm, back to back / after a pause / cold), warm run beside bare
    runs (sys.executable, base -S), reset; the load average before and after."""
    from code_gym.grading import MOUNT, RUNNER
    from code_gym.sandbox import Sandbox
    from code_gym.sandbox.bwrap import host_interpreter

    load_before = os.getloadavg()
    exe = host_interpreter().executable
    mounts = {str(RUNNER): MOUNT}
    argv = ["python", f"{MOUNT}/bootstrap.py", "-c", SNIPPET]

    def first(warm: bool, pause: float) -> float:
        t0 = time.perf_counter()
        box = Sandbox(warm_mounts=mounts if warm else None)
        built = time.perf_counter() - t0
        time.sleep(pause)
        t1 = time.perf_counter()
        r = box.run(argv, ro_mounts=mounts)
        took = built + time.perf_counter() - t1
        box.close()
        assert r.stdout == EXPECTED and r.exit_code == 0, r
        return took

    Sandbox().close()  # the one-time probe and imports are not a session's start
    start = [first(True, 0.0) for _ in range(n)]
    session = [first(True, think_s) for _ in range(n)]
    cold = [first(False, 0.0) for _ in range(n)]
    warm: list[float] = []
    bare_s: list[float] = []
    bare: list[float] = []
    with Sandbox(warm_mounts=mounts) as box:
        for _ in range(n):  # interleaved, so machine load hits all three alike
            time.sleep(think_s)
            t0 = time.perf_counter()
            r = box.run(argv, ro_mounts=mounts)
            warm.append(time.perf_counter() - t0)
            assert r.stdout == EXPECTED, r
            for cmd, into in (([exe, "-S"], bare_s), ([sys.executable], bare)):
                t0 = time.perf_counter()
                out = subprocess.run([*cmd, "-c", SNIPPET], capture_output=True)
                into.append(time.perf_counter() - t0)
                assert out.stdout.decode() == EXPECTED, out
        reset: list[float] = []
        for _ in range(n):
            for i in range(100):
                box.write_file(f"pkg/m{i}.py", f"x = {i}\n" * 50)
            t0 = time.perf_counter()
            box.reset()
            reset.append(time.perf_counter() - t0)
            assert box.list_files() == []
    return {
        "start_p50": _q(start, 0.5),
        "start_p99": _q(start, 0.99),
        "session_p50": _q(session, 0.5),
        "session_p99": _q(session, 0.99),
        "cold_p50": _q(cold, 0.5),
        "cold_p99": _q(cold, 0.99),
        "warm_p50": _q(warm, 0.5),
        "warm_p99": _q(warm, 0.99),
        "bare_s_p50": _q(bare_s, 0.5),
        "bare_p50": _q(bare, 0.5),
        "reset_p50": _q(reset, 0.5),
        "reset_p99": _q(reset, 0.99),
        "n": n,
        "think_s": think_s,
        "warm_mean": statistics.fmean(warm) * 1e3,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def _rows(d: dict[str, float]) -> list[Any]:
    from calls._table import Row

    n = int(d["n"])
    load = f"load {d['load_before'][0]:.1f} → {d['load_after'][0]:.1f}"
    return [
        Row(
            "code_sandbox_start_ms",
            "Code sandbox: start → first run, back to back (p50)",
            "ms",
            d["start_p50"],
            None,
            False,
            limit=GOAL_START_MS,
            note=f"p99 {d['start_p99']:.1f} ms; {n} sandboxes; cold {d['cold_p50']:.1f} ms; {load}",
        ),
        Row(
            "code_sandbox_session_ms",
            "Code sandbox: start → first run after a pause (p50)",
            "ms",
            d["session_p50"],
            None,
            False,
            limit=GOAL_START_MS,
            note=f"p99 {d['session_p99']:.1f} ms; {d['think_s']:g} s pause, untimed",
        ),
        Row(
            "code_sandbox_warm_ms",
            "Code sandbox: warm run vs bare subprocess.run",
            "ms",
            d["warm_p50"],
            d["bare_p50"],
            False,
            target=GOAL_WARM_RATIO,
            note=f"p50 of {n} runs each, interleaved; p99 {d['warm_p99']:.1f} ms; {load}",
        ),
        Row(
            "code_sandbox_warm_strict_ms",
            "Code sandbox: warm run vs bare python -S",
            "ms",
            d["warm_p50"],
            d["bare_s_p50"],
            False,
            note="strict floor: no site-packages either",
        ),
        Row(
            "code_sandbox_reset_ms",
            "Code sandbox: reset, 100 files (p50)",
            "ms",
            d["reset_p50"],
            None,
            False,
            limit=GOAL_RESET_MS,
            note=f"p99 {d['reset_p99']:.2f} ms; a warm sandbox (its spare restarts)",
        ),
    ]


def _register() -> None:
    from calls._bench import Bench, measurement
    from calls._driver import _kill
    from calls._servers import ROOT

    @measurement("code-sandbox", "Code Gym sandbox: start, warm run vs bare, reset", budget_s=60)
    async def code_sandbox(b: Bench) -> list[Any]:
        n = 10 if b.cfg.quick else 20
        proc = await asyncio.create_subprocess_exec(
            sys.executable, HERE, "--json", "-n", str(n), cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(proc.communicate(), 60.0)
        finally:
            _kill(proc)
        if proc.returncode != 0 or not out.strip():
            raise RuntimeError(f"code_sandbox.py exited {proc.returncode}: {err.decode()[-1500:]}")
        return _rows(json.loads(out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=40, help="samples of each figure")
    parser.add_argument("--think", type=float, default=0.2, help="an agent's pause, seconds")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    d = measure(args.n, args.think)
    if args.json:
        print(json.dumps(d))
        return 0
    warm, bare, strict = d["warm_p50"], d["bare_p50"], d["bare_s_p50"]
    print(f"load average {d['load_before']} before, {d['load_after']} after")
    print(f"start → first run, back to back  p50 {d['start_p50']:.1f} ms  p99 {d['start_p99']:.1f}")
    print(
        f"  after a {d['think_s']:g} s pause  p50 {d['session_p50']:.1f} ms  p99 "
        f"{d['session_p99']:.1f}; cold p50 {d['cold_p50']:.1f} ms  p99 {d['cold_p99']:.1f}"
    )
    print(
        f"warm run p50 {warm:.1f} ms (p99 {d['warm_p99']:.1f}); bare subprocess.run "
        f"{bare:.1f} ms ({warm / bare:.2f}x);"
    )
    print(f"  strict floor (base python -S) {strict:.1f} ms ({warm / strict:.2f}x)")
    print(f"reset (100 files) p50 {d['reset_p50']:.2f} ms  p99 {d['reset_p99']:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
else:
    _register()
