"""Draws the performance page's charts (docs/figures/*.svg) from docs/data/bench.json, the
recorded `just bench --json` run docs/performance.md is generated from, with mcpgym's own bar
charts (`mcpgym.harness.eval.svg`). `--check` exits 1 when a chart is out of date.

Usage: python scripts/docs_charts.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from figures._measure_sessions import SWEEP  # noqa: E402  (the sweep's K)

from mcpgym.harness.eval.svg import bar_chart  # noqa: E402

DOCS = ROOT / "docs"
FIGURES = DOCS / "figures"
DATA = DOCS / "data" / "bench.json"


def charts() -> dict[str, str]:
    figures = json.loads(DATA.read_text())["figures"]

    def ratios(keys: list[str]) -> list[float]:
        return [figures[k]["mcpgym"] / figures[k]["floor"] for k in keys]

    ks = [f"K = {k:,}" for k in SWEEP]
    series = {
        "aggregate steps/s, mcpgym / floor": ratios([f"wsk{k}" for k in SWEEP]),
        "server CPU per step, mcpgym / floor": ratios([f"wsk{k}_cpu" for k in SWEEP]),
        "server CPU per step in the worker pool, mcpgym / floor": ratios(
            [f"wspool{k}_cpu" for k in SWEEP]
        ),
    }
    names = {
        "ws1": "WS steps/s, 1 session",
        "ws100": "WS steps/s, 100 sessions",
        "http": "HTTP /step req/s",
        "mcp1": "/mcp calls/s, 1 client",
        "mcp50": "/mcp calls/s, 50 clients",
    }
    return {
        "sessions.svg": bar_chart(
            ks,
            series,
            title="WebSocket sessions: mcpgym against the floor of the same run",
            max_value=max(2.0, *(v for values in series.values() for v in values)),
            fmt="{:.2f}x",
        ),
        "throughput.svg": bar_chart(
            list(names.values()),
            {"mcpgym / floor": ratios(list(names))},
            title="Throughput against the floor of the same run",
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
