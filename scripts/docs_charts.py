"""Draws the performance page's charts (docs/figures/*.svg) from docs/figures/bench.json with
mcpgym's own bar charts (`mcpgym.harness.svg`). `--check` exits 1 when a chart is out of date.

Usage: python scripts/docs_charts.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mcpgym.harness.svg import bar_chart

FIGURES = Path(__file__).resolve().parents[1] / "docs" / "figures"


def charts() -> dict[str, str]:
    data = json.loads((FIGURES / "bench.json").read_text())
    s, q = data["sessions"], data["quiet_machine"]
    ks = [f"K = {k}" for k in s["K"]]
    ratio = [m / f for m, f in zip(s["mcpgym_steps_per_s"], s["floor_steps_per_s"], strict=True)]
    cpu = [m / f for m, f in zip(s["mcpgym_cpu_us"], s["floor_cpu_us"], strict=True)]
    series = {
        "aggregate steps/s, mcpgym / floor": ratio,
        "server CPU per step, mcpgym / floor": cpu,
    }
    if "pool_cpu_us" in s:  # the same game with blocking = True: every step in the worker pool
        series["server CPU per step in the worker pool, mcpgym / floor"] = [
            m / f for m, f in zip(s["pool_cpu_us"], s["pool_floor_cpu_us"], strict=True)
        ]
    names = {
        "ws1_steps_per_s": "WS steps/s, 1 session",
        "ws100_steps_per_s": "WS steps/s, 100 sessions",
        "http_step_per_s": "HTTP /step req/s",
        "mcp1_calls_per_s": "/mcp calls/s, 1 client",
        "mcp50_calls_per_s": "/mcp calls/s, 50 clients",
    }
    return {
        "sessions.svg": bar_chart(
            ks,
            series,
            title="WebSocket sessions: mcpgym against the floor",
            max_value=max(2.0, *(v for values in series.values() for v in values)),
            fmt="{:.2f}x",
        ),
        "throughput.svg": bar_chart(
            list(names.values()),
            {"mcpgym / floor": [q[k][0] / q[k][1] for k in names]},
            title="Throughput against the floor (quiet machine)",
            fmt="{:.2f}x",
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a chart is out of date")
    args = parser.parse_args(argv)
    stale = []
    for name, svg in charts().items():
        path = FIGURES / name
        if path.exists() and path.read_text() == svg:
            continue
        if args.check:
            stale.append(name)
        else:
            path.write_text(svg)
    if stale:
        print("out of date (run: python scripts/docs_charts.py):", *stale)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
