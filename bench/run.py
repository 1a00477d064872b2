"""`just bench`: mcpgym's server against a bare Starlette+uvicorn echo floor, in one bounded run.

Both servers run as subprocesses on 127.0.0.1 (free ports) with identical uvicorn settings
(`bench/calls/_floor.py: UVICORN_SETTINGS`), and are driven by identical client code in separate
worker
processes (`bench/calls/_load.py`: raw `websockets` and `httpx`, never mcpgym's client). Floor and
mcpgym
runs alternate; with several rounds the best of each is kept. Every wait is time-boxed, the run
stops by itself, and every process it started is stopped by PID at the end (also on error or ^C).

Measurements (`--only NAME`, repeatable):
  ws1       single-session WS tool-call steps/s, step latency, server CPU µs per step
            (target ≥ 0.6x)
  ws100     100-session aggregate WS steps/s
  http      HTTP POST /step requests/s (keep-alive, a few concurrent requests)
  mcp1      `/mcp` tools/call calls/s, 1 MCP client (2025-11-25 session, JSON responses),
            `mcpgym serve ... --mode production` against the floor's `/mcp` JSON-RPC echo
  mcp50     the same with 50 concurrent MCP clients (one session and connection each)
  cold      spawn → first 200 from /health (median) and idle RSS after start, simulation and
            production mode (targets ≤ 1 s, ≤ 60 MB)
  prompt    Calendar Gym's tool list as the llm agent sends it: bytes and tokens, all tools,
            --compact-tools, and a per-task subset (bench/prompt_bench.py)
  sessions  the WS session sweep, K = 1, 10, 100, 500, 1000 sessions: aggregate steps/s, p50/p99,
            server CPU per step, with issue 17's targets (bench/figures/_measure_sessions.py)
  sessions-pool  the same sweep with every step in the worker pool (`blocking = True`)
  instructions   callgrind instructions per WS call_tool step (inline and worker pool) and per
            `/mcp` tools/call, floor beside mcpgym, repeated windows (skipped without valgrind)
  calendar  Calendar Gym in-process (bench/calendar_bench.py): session reset p50 (target
            ≤ 5 ms) and the call-path overhead of a typical `events_list`
  rss       production idle RSS (target ≤ 60 MB), after a first /mcp call, with all of `mcp`
            imported, and simulation (bench/figures/_measure_rss.py)
  cli       `mcpgym --help` spawn to exit beside `python -c pass` (target ≤ 0.5 s; names any
            heavy import it made: none expected)
  reset     Calendar reset with 0 / 100 / 1,000 patched events, a task's patch and the same
            from the wire (target ≤ 2 ms at 1,000; bench/figures/_measure_reset.py)

Adding one: write an `async def f(b: Bench) -> list[Row]` decorated with
`@measurement("name", "...")`. `b.server(name)` starts (once) and returns a server of
`server_command` ("floor", "mcpgym", "mcpgym-production"); `b.compare(spec_for, procs)` drives
the floor and an mcpgym server (`mcpgym=`), alternating, with a `_load.py` spec and returns a
`Comparison` (`.rate(role)` best rate, `.cpu_us(role)` least server CPU per op; roles "floor"
and "mcpgym"). A `Row` holds a figure beside the floor (`target`: a ratio) or alone (`limit`: an
absolute bound on the mcpgym figure). `legacy=True` adds the old asyncio/h11 floor
(`Row.floor2`). Issue 17's table (printed after the main one) is collected from the
`ISSUE_TABLE` lines of the modules listed in bench/calls/_issue_table.py's `SOURCES`.

Usage: python bench/run.py [--quick] [--only NAME ...] [--json PATH] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

# The measurements register on import and run in registration order: keep these two in this order.
from figures import (  # noqa: E402
    _measure_load,
    _measure_startup,  # noqa: F401
)

# isort: split
from figures import (  # noqa: E402
    _measure_prompt,  # noqa: F401  (runs after the startup measurements)
    _measure_reset,  # noqa: F401  (issue 17: Calendar reset with patched events)
    _measure_rss,  # noqa: F401  (issue 17: production idle RSS)
    _measure_sessions,  # noqa: F401
)

# isort: split
from figures import _measure_instructions  # noqa: E402, F401  (after the sessions sweep)

# isort: split
import code_sandbox  # noqa: E402, F401  (issue 30: Code Gym's sandbox)
from calls._bench import MEASUREMENTS, Bench  # noqa: E402
from calls._driver import Config  # noqa: E402
from calls._floor import UVICORN_SETTINGS, resolve_auto  # noqa: E402
from calls._issue_table import collect as issue_table  # noqa: E402
from calls._issue_table import render as render_issue_table  # noqa: E402
from calls._servers import ServerError  # noqa: E402
from calls._table import Row, render  # noqa: E402

# -- main ------------------------------------------------------------------------------------------


def machine_busy(seconds: float = 0.5) -> float:
    """Fraction of all CPUs busy over `seconds` before we start anything (other users' load)."""

    def sample() -> tuple[int, int]:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = values[3] + values[4]  # idle + iowait
        return sum(values) - idle, sum(values)

    busy0, total0 = sample()
    time.sleep(seconds)
    busy1, total1 = sample()
    return (busy1 - busy0) / max(1, total1 - total0)


async def run(cfg: Config, names: list[str]) -> tuple[list[Row], dict[str, str], Bench]:
    """Run the measurements in order within `cfg.budget_s`: one that would overrun it is stopped
    (its servers and workers too) and the later ones are skipped, so the figures measured so far
    are still printed."""
    bench = Bench(cfg)
    rows: list[Row] = []
    errors: dict[str, str] = {}
    budget = cfg.budget_s + sum(MEASUREMENTS[n].budget_s for n in names)
    deadline = time.perf_counter() + budget
    try:
        for name in names:
            t0 = time.perf_counter()
            if deadline - t0 < 1.0:
                errors[name] = f"skipped: the run's {budget:.0f} s budget is spent"
                continue
            task = asyncio.ensure_future(MEASUREMENTS[name].fn(bench))
            try:
                rows += await asyncio.wait_for(task, deadline - t0)
            except (ServerError, RuntimeError, OSError, TimeoutError) as exc:
                if task.cancelled():
                    errors[name] = f"stopped at the run's {budget:.0f} s budget"
                else:
                    errors[name] = f"{type(exc).__name__}: {exc}"
            bench.timings[name] = round(time.perf_counter() - t0, 1)
        for srv in bench.servers.values():
            if srv.proc is not None and srv.proc.poll() is None:
                bench.notes.append(f"{srv.name}: {srv.native_libs()}")
    finally:
        bench.stop_all()  # synchronous: must not be skipped by a second cancellation
    seen: set[str] = set()
    for row in rows:  # one key per figure: `--json` and issue 17's table look figures up by key
        if row.key in seen:
            errors[f"key {row.key}"] = "two measurements wrote the same figure key"
        seen.add(row.key)
    return rows, errors, bench


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="short windows, one round (smoke test)")
    p.add_argument(
        "--only",
        action="append",
        choices=list(MEASUREMENTS),
        metavar="NAME",
        help=f"run only this measurement (repeatable): {', '.join(MEASUREMENTS)}",
    )
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--duration", type=float, help="seconds per timed window (overrides the preset)")
    p.add_argument("--rounds", type=int, help="alternating rounds per comparison (best one kept)")
    p.add_argument("--procs", type=int, help="client processes for the ws100, http and mcp50 loads")
    p.add_argument(
        "--check",
        action="store_true",
        help=f"exit 1 if ws1 is below {_measure_load.TARGET_WS1}x the floor",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cfg = Config.make(
        args.quick,
        duration_s=args.duration,
        rounds=args.rounds,
        agg_procs=args.procs,
        http_procs=args.procs,
        mcp_procs=args.procs,
    )
    names = args.only or list(MEASUREMENTS)
    auto = resolve_auto()
    pinned = {k: UVICORN_SETTINGS[k] for k in auto}
    if auto != pinned:  # `mcpgym serve` uses uvicorn's auto choices; the floor pins them
        print(f"warning: uvicorn auto resolves to {auto}, floor pins {pinned}", file=sys.stderr)
    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()[0]
    busy = machine_busy()
    try:
        # `run` keeps to the budget itself; this only guards against a hang in stopping.
        extra = sum(MEASUREMENTS[n].budget_s for n in names)
        rows, errors, bench = asyncio.run(
            asyncio.wait_for(run(cfg, names), cfg.budget_s + extra + 30)
        )
    except TimeoutError:
        print(f"bench: over its {cfg.budget_s:.0f} s budget; stopped", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench: interrupted; servers stopped", file=sys.stderr)
        return 130
    meta = {
        "uvicorn": ", ".join(f"{k}={pinned[k]}" for k in pinned) + f" (auto: {auto == pinned})",
        "server_native_libs": "; ".join(bench.notes) or "—",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "duration_s": cfg.duration_s,
        "rounds": cfg.rounds,
        "quick": cfg.quick,
        "elapsed_s": time.perf_counter() - t0,
        "timings_s": bench.timings,
        "machine_busy_before": busy,
        "started_utc": started,
        "loadavg_1min_before": round(load_before, 2),
        "loadavg_1min_after": round(os.getloadavg()[0], 2),
        "command": "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    render(rows, meta, errors)
    table = issue_table(rows)
    if table:
        render_issue_table(table)
    if args.json:
        figures = {
            r.key: {
                "label": r.label,
                "unit": r.unit,
                "mcpgym": r.mcpgym,
                "floor": r.floor,
                "floor_h11": r.floor2,
                "ratio": r.ratio,
                "higher_is_better": r.higher_is_better,
                "target": r.target,
                "limit": r.limit,
                "meets_target": r.meets_target,
                "note": r.note,
            }
            for r in rows
        }
        out = {"meta": meta, "figures": figures, "errors": errors, "issue_table": table}
        args.json.write_text(json.dumps(out, indent=2))
    if errors:
        return 1
    if args.check:
        ws = next((r for r in rows if r.key == "ws1"), None)
        if ws is not None and ws.meets_target is False:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
