"""Instructions per request, counted by callgrind (bench/calls/_instructions.py): a WS call_tool
step
on the floor, on mcpgym (Guess runs inline, `blocking = False`) and on mcpgym with the same game
in the worker pool (`blocking = True`, the default); a `/mcp` tools/call on the floor's JSON-RPC
echo and on `mcpgym serve --mode production`.

Counts are the stable figure on a loaded machine: each server is measured in `REPEATS` separate
windows and the note gives their spread. Skipped, with the reason, when valgrind is absent.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

from calls._bench import Bench, measurement
from calls._instructions import server_instructions
from calls._issue_table import Line as _Line
from calls._table import Row

TARGET_WS = 1.6  # issue 17: a WS call_tool step at most 1.6x the floor's instructions
REPEATS = 2


def _spread(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{len(values)} windows, spread {100 * (hi - lo) / lo:.1f} %" if lo else ""


def _measure(steps: int, repeats: int) -> dict[str, dict[str, list[float]]]:
    """Every server under callgrind, two at a time (valgrind runs one thread at a time: the
    counts do not depend on what else runs). A `/mcp` call costs ~10x a WS step: fewer of them."""
    from concurrent.futures import ThreadPoolExecutor

    plan = {
        "floor": (("ws", "mcp"), steps),
        "mcpgym": (("ws",), steps),
        "mcpgym-pool": (("ws",), steps),
        "mcpgym-production": (("mcp",), max(50, steps // 4)),
    }
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        futures = {
            name: pool.submit(server_instructions, name, n, Path(tmp), kinds, repeats, 100)
            for name, (kinds, n) in plan.items()
        }
        return {name: f.result() for name, f in futures.items()}


@measurement("instructions", "callgrind instructions per WS step and /mcp call", budget_s=1200)
async def instructions(b: Bench) -> list[Row]:
    keys = [
        ("ws_instr", "WS call_tool step, instructions"),
        ("ws_instr_pool", "WS call_tool step in the worker pool (blocking=True), instructions"),
        ("mcp_instr", "/mcp tools/call, instructions"),
    ]
    missing = [t for t in ("valgrind", "callgrind_control") if shutil.which(t) is None]
    if missing:
        why = f"skipped: {' and '.join(missing)} not installed (apt-get install valgrind)"
        return [Row(k, label, "k instr", None, None, False, note=why) for k, label in keys]
    steps, repeats = (200, 1) if b.cfg.quick else (1000, REPEATS)
    per = await asyncio.to_thread(_measure, steps, repeats)
    floor_ws, floor_mcp = per["floor"]["ws"], per["floor"]["mcp"]

    def row(key: str, label: str, values: list[float], floor: list[float], **kw: float) -> Row:
        note = f"{_spread(values)} / {_spread(floor)}"
        return Row(
            key, label, "k instr", min(values) / 1e3, min(floor) / 1e3, False, note=note, **kw
        )

    return [
        row(*keys[0], per["mcpgym"]["ws"], floor_ws, target=TARGET_WS),
        row(*keys[1], per["mcpgym-pool"]["ws"], floor_ws),
        row(*keys[2], per["mcpgym-production"]["mcp"], floor_mcp),
    ]


# bench/calls/_issue_table.py: this module's lines of issue 17's table
ISSUE_TABLE = [
    _Line("WS call_tool step, instructions", ("ws_instr",), f"≤ {TARGET_WS}x"),
    _Line("WS call_tool step in the worker pool, instructions", ("ws_instr_pool",), "—"),
    _Line("/mcp tools/call, instructions", ("mcp_instr",), "—"),
]
