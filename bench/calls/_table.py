"""bench/run.py's results: `Row` (one figure beside the floor, or alone) and the rich table."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any


@dataclass
class Row:
    """One figure: mcpgym beside the floor (`ratio` is always mcpgym / floor), or alone.

    `target` bounds the ratio, `limit` the mcpgym figure itself (in `unit`): a minimum when
    higher is better, else a maximum.
    """

    key: str
    label: str
    unit: str
    mcpgym: float | None
    floor: float | None
    higher_is_better: bool = True
    target: float | None = None  # minimum ratio (higher is better) or maximum (lower is better)
    note: str = ""
    limit: float | None = None  # minimum or maximum of `mcpgym`, in `unit`
    floor2: float | None = None  # the old asyncio/h11 floor (a second column; no target)

    @property
    def ratio(self) -> float | None:
        if self.mcpgym is None or not self.floor:
            return None
        return self.mcpgym / self.floor

    def _within(self, value: float | None, bound: float | None) -> bool | None:
        if bound is None or value is None:
            return None
        return value >= bound if self.higher_is_better else value <= bound

    @property
    def meets_target(self) -> bool | None:
        """Whether the ratio target and the absolute limit hold (`None`: nothing to check)."""
        checks = [
            c
            for c in (self._within(self.ratio, self.target), self._within(self.mcpgym, self.limit))
            if c is not None
        ]
        return all(checks) if checks else None


def _fmt(v: float | None, unit: str) -> str:
    if v is None or v != v:
        return "—"
    if unit in ("steps/s", "req/s", "calls/s"):
        return f"{v:,.0f}"
    if unit == "ms" and v < 10:
        return f"{v:,.2f}"
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def _target(row: Row) -> str:
    sign = "≥" if row.higher_is_better else "≤"
    parts = []
    if row.target is not None:
        parts.append(f"{sign} {row.target:.2f}x")
    if row.limit is not None:
        parts.append(f"{sign} {_fmt(row.limit, row.unit)} {row.unit}")
    ok = row.meets_target
    mark = "" if ok is None else (" [green]✓[/]" if ok else " [red]✗[/]")
    return "; ".join(parts) + mark


def render(rows: list[Row], meta: dict[str, Any], errors: dict[str, str]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 140)
    table = Table(title="mcpgym vs bare Starlette+uvicorn floor", title_justify="left")
    table.add_column("figure")
    table.add_column("unit")
    table.add_column("mcpgym", justify="right")
    table.add_column("floor", justify="right")
    legacy = any(row.floor2 is not None for row in rows)
    if legacy:
        table.add_column("floor h11", justify="right")
    table.add_column("ratio", justify="right")
    table.add_column("target", justify="right")
    table.add_column("note", overflow="fold")
    for row in rows:
        r = row.ratio
        ratio = "—" if r is None else f"{r:.2f}x"
        target = _target(row)
        arrow = "↑" if row.higher_is_better else "↓"
        cells = [f"{row.label} {arrow}", row.unit, _fmt(row.mcpgym, row.unit)]
        cells += [_fmt(row.floor, row.unit)] + ([_fmt(row.floor2, row.unit)] if legacy else [])
        table.add_row(*cells, ratio, target, row.note)
    console.print(table)
    busy = meta["machine_busy_before"]
    if busy > 0.25:
        console.print(
            f"[yellow]warning: the machine was {busy:.0%} busy before the run started (other "
            "processes); throughput figures are noisy. Ratios from alternating rounds and the CPU "
            "per step figures hold up better.[/]"
        )
    for name, err in errors.items():
        console.print(f"[red]{name} failed:[/] {err}")
    console.print(
        f"[dim]ratio = mcpgym / floor (↑ higher is better, ↓ lower); floor h11: the old floor "
        f"(asyncio, h11, websockets), no target; target: on the ratio (x) or "
        f"on the mcpgym figure (unit). uvicorn: {meta['uvicorn']}; "
        f"servers loaded: {meta['server_native_libs']}; {meta['cpus']} CPUs; "
        f"{meta['duration_s']} s windows x {meta['rounds']} round(s); "
        f"took {meta['elapsed_s']:.1f} s {meta['timings_s']}; machine {busy:.0%} busy before[/]"
    )
