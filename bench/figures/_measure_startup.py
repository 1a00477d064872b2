"""bench/run.py measurements of start-up and reset costs: cold (spawn → first /health 200, idle
RSS, both modes) and calendar (Calendar Gym session reset and `events_list`, in its own process)."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, when run as a script

from calls._bench import Bench, measurement
from calls._driver import _kill
from calls._servers import BENCH, ROOT, SERVER_NAMES, Server
from calls._table import Row

LIMIT_COLD_MS = 1000.0  # cold start → first /health 200, either mode
LIMIT_RSS_MB = 60.0  # idle RSS after start, either mode
LIMIT_CALENDAR_RESET_MS = 5.0  # issue 4: Calendar Gym session reset p50


_IMPORT_COST = """
import resource, sys, time
t = time.perf_counter()
for name in sys.argv[1:]:
    __import__(name)
took = time.perf_counter() - t
print(took * 1e3, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def import_cost(*modules: str) -> tuple[float, float]:
    """(ms, peak MB) of importing `modules` in a fresh interpreter (a reference for cold start)."""
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_COST, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


@measurement("cold", "cold start and idle memory")
async def cold(b: Bench) -> list[Row]:
    # Fresh processes (not the ones the throughput runs use), alternating the three servers.
    starts: dict[str, list[float]] = {name: [] for name in SERVER_NAMES}
    rss: dict[str, list[float]] = {name: [] for name in SERVER_NAMES}
    for _ in range(b.cfg.cold_runs):
        for name in SERVER_NAMES:
            srv = Server(name)
            try:
                starts[name].append(srv.start() * 1e3)  # blocking on purpose: nothing else runs
                await asyncio.sleep(0.3)  # let start-up settle before reading the idle RSS
                rss[name].append(srv.rss_mb())
            finally:
                srv.stop()
    med = {k: statistics.median(v) for k, v in starts.items()}
    mem = {k: statistics.median(v) for k, v in rss.items()}
    n = b.cfg.cold_runs
    # What production cannot avoid: the `mcp` package (and pydantic, which mcpgym needs anyway).
    mcp_ms, mcp_mb = await asyncio.to_thread(
        import_cost, "pydantic", "mcp.server.lowlevel", "mcp.server.streamable_http_manager"
    )
    mcp_ref = f"`import mcp` alone (with pydantic): {mcp_ms:,.0f} ms, {mcp_mb:.0f} MB"
    notes = {
        "cold_ms": f"spawn → first /health 200, median of {n}",
        "cold_ms_prod": f"median of {n}; {mcp_ref}",
        "rss_mb": "",
        "rss_mb_prod": "imports `mcp` at start-up (by design)",
    }
    rows: list[Row] = []
    for name, mode in (("mcpgym", "simulation"), ("mcpgym-production", "production")):
        suffix = "" if mode == "simulation" else "_prod"
        rows += [
            Row(
                f"cold_ms{suffix}",
                f"cold start, {mode}",
                "ms",
                med[name],
                med["floor"],
                False,
                limit=LIMIT_COLD_MS,
                note=notes[f"cold_ms{suffix}"],
            ),
            Row(
                f"rss_mb{suffix}",
                f"idle RSS after start, {mode}",
                "MB",
                mem[name],
                mem["floor"],
                False,
                limit=LIMIT_RSS_MB,
                note=notes[f"rss_mb{suffix}"],
            ),
        ]
    return rows


@measurement("calendar", "Calendar Gym reset and events_list (in-process)")
async def calendar(b: Bench) -> list[Row]:
    # In its own process (bench/calendar_bench.py --json), so that neither the runner nor the
    # servers carry Calendar Gym; no floor: these are absolute figures.
    resets, calls = (100, 200) if b.cfg.quick else (300, 600)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BENCH / "calendar_bench.py"),
        "--json",
        "--resets",
        str(resets),
        "--calls",
        str(calls),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30.0)
    finally:
        _kill(proc)
    if not out.strip():
        raise RuntimeError(f"calendar_bench.py exited {proc.returncode}: {err.decode()[-1500:]}")
    data = json.loads(out)
    reset, listing = data["reset_ms"], data["events_list"]
    astep, body = listing["astep_us"], listing["tool_body_us"]
    parts = listing.get("overhead_parts_us", {})
    split = ", ".join(f"{k} {v:,.0f}" for k, v in parts.items())
    return [
        Row(
            "calendar_reset_ms",
            "Calendar Gym session reset p50",
            "ms",
            reset["p50"],
            None,
            False,
            limit=LIMIT_CALENDAR_RESET_MS,
            note=f"p95 {reset['p95']:.2f} ms; {resets} resets",
        ),
        Row(
            "calendar_events_list_us",
            "Calendar events_list astep p50",
            "µs",
            astep["p50"],
            None,
            False,
            note=f"p95 {astep['p95']:,.0f} µs; tool body alone p50 {body['p50']:,.0f} µs; "
            f"{listing['items']} items, one week, singleEvents",
        ),
        Row(
            "calendar_events_list_overhead_us",
            "Calendar events_list overhead p50",
            "µs",
            listing["overhead_p50_us"],
            None,
            False,
            note=f"astep minus tool body, paired; {split}" if split else "astep minus tool body",
        ),
    ]


LIMIT_HELP_MS = 500.0  # issue 29: `mcpgym --help` on a quiet machine (every CLI call pays it)

_HELP_IMPORTS = """
import runpy, sys
sys.argv = ["mcpgym", "--help"]
try:
    runpy.run_module("mcpgym.servers", run_name="__main__")
except SystemExit:
    pass
heavy = ("asyncio", "httpx", "mcp", "pydantic", "rich", "starlette", "uvicorn")
print(" ".join(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)
"""


def _heavy_imports() -> str:
    """The heavy packages `mcpgym --help` imported (none expected: lazy imports)."""
    return subprocess.run(
        [sys.executable, "-c", _HELP_IMPORTS], cwd=ROOT, capture_output=True, text=True, timeout=60
    ).stderr.strip()


def _wall_ms(cmd: list[str]) -> float:
    return _timed(cmd)[0]


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall ms, CPU ms) of running `cmd`: the CPU time (user + system, from the child's
    rusage) is what a quiet machine's wall time comes to, and holds up on a busy one."""
    import resource
    import time

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=60, check=True)
    wall = (time.perf_counter() - began) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3
    return wall, cpu


@measurement("cli", "`mcpgym --help` start-up beside a bare interpreter")
async def cli(b: Bench) -> list[Row]:
    # Fresh processes, alternating; the floor is the interpreter itself (`python -c pass`): what
    # any Python command pays before its first import.
    runs = 5 if b.cfg.quick else 11
    helps, bare, cpu = [], [], []
    for _ in range(runs):
        wall, used = await asyncio.to_thread(
            _timed, [sys.executable, "-m", "mcpgym.servers", "--help"]
        )
        helps.append(wall)
        cpu.append(used)
        bare.append(await asyncio.to_thread(_wall_ms, [sys.executable, "-c", "pass"]))
    heavy = await asyncio.to_thread(_heavy_imports)
    return [
        Row(
            "cli_help_ms",
            "`mcpgym --help` (spawn to exit)",
            "ms",
            statistics.median(helps),
            statistics.median(bare),
            False,
            limit=LIMIT_HELP_MS,
            note=f"median of {runs}; CPU {statistics.median(cpu):,.0f} ms; floor: `python -c "
            f"pass`; heavy imports: {heavy or 'none'}",
        )
    ]
