"""Issue 17's table: one line per figure with mcpgym, the floor, the ratio, the target and ✓/✗,
collected from the rows the measurements produced.

Each module in `SOURCES` defines `ISSUE_TABLE`, a list of `Line`s naming the row keys a line is
made of; the table shows the lines of every source whose rows were measured, in `SOURCES` order.
A new figure joins by defining `ISSUE_TABLE` in its measurement module and listing it here.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any

from calls._table import Row, _fmt

# The measurement modules the table collects from, in table order.
SOURCES: list[str] = [
    "figures._measure_instructions",
    "figures._measure_load",
    "figures._measure_sessions",
    "figures._measure_rss",
    "figures._measure_reset",
]


@dataclass(frozen=True)
class Line:
    """A line of the table: `keys[0]` gives mcpgym, floor and ratio; the other keys' mcpgym
    figures follow in the same cell (e.g. the p99 beside an aggregate); ✓ when every key meets
    its target."""

    figure: str
    keys: tuple[str, ...]
    target: str


def lines() -> list[Line]:
    out: list[Line] = []
    for name in SOURCES:
        out += getattr(importlib.import_module(name), "ISSUE_TABLE", [])
    return out


def _cell(row: Row, value: float | None) -> str:
    return "—" if value is None else f"{_fmt(value, row.unit)} {row.unit}"


def _floor_misses(row: Row) -> str:
    """A note when the floor's own figure misses an absolute limit (the target stays as it is:
    the line is still ✗, but the reader learns what this machine allows at all)."""
    if row.limit is None or row.floor is None or row._within(row.floor, row.limit) is not False:
        return ""
    return f"the floor misses {_cell(row, row.limit)} too ({_cell(row, row.floor)}) on this machine"


def collect(rows: list[Row]) -> list[dict[str, Any]]:
    """The table's lines whose first row was measured, as dicts (also written to --json)."""
    by_key = {r.key: r for r in rows}
    table: list[dict[str, Any]] = []
    for line in lines():
        got = [by_key[k] for k in line.keys if k in by_key]
        if not got or got[0].key != line.keys[0]:
            continue
        head = got[0]
        mcpgym = "; ".join(_cell(r, r.mcpgym) for r in got)
        floor = "; ".join(_cell(r, r.floor) for r in got if r.floor is not None)
        checks = [r.meets_target for r in got if r.meets_target is not None]
        notes = [head.note] if head.mcpgym is None and head.note else []
        notes += [_floor_misses(r) for r in got if _floor_misses(r)]
        table.append(
            {
                "figure": line.figure,
                "mcpgym": mcpgym,
                "floor": floor or "—",
                "ratio": None if head.ratio is None else round(head.ratio, 3),
                "target": line.target,
                "met": all(checks) if checks else None,
                "note": "; ".join(notes),
            }
        )
    return table


def render(table: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    out = Table(title="issue 17: figures and targets", title_justify="left")
    for col in ("figure", "mcpgym", "floor", "ratio", "target", "met", "note"):
        out.add_column(col, justify="left" if col in ("figure", "target", "note") else "right")
    for t in table:
        ratio = "—" if t["ratio"] is None else f"{t['ratio']:.2f}x"
        met = {True: "[green]✓[/]", False: "[red]✗[/]", None: "—"}[t["met"]]
        out.add_row(t["figure"], t["mcpgym"], t["floor"], ratio, t["target"], met, t["note"])
    Console(width=None if sys.stdout.isatty() else 160).print(out)
