"""The session sweep (issue 17): aggregate WS tool-call steps/s, p50/p99 and server CPU per step
at K = 10, 100, 500 and 1,000 concurrent sessions (ws1 gives K = 1), beside the floor,
with the targets as ✓/✗ rows: aggregate ≥ 0.7x the floor up to K = 500 and ≥ 0.6x at 1,000; p99
≤ 20 / 60 / 150 ms at K = 100 / 500 / 1,000; server CPU per step flat (≤ 1.1x) from K = 100 to
1,000. `mcpgym serve` runs with its default `--max-sessions`, so a default that cannot hold the
sweep fails it (CAPACITY_REACHED replies are errors)."""

from __future__ import annotations

from _bench import Bench, Comparison, measurement
from _measure_load import _ws_spec
from _servers import Server
from _table import Row, _fmt

SWEEP = (10, 100, 500, 1000)
TARGET_RATIO = {10: 0.7, 100: 0.7, 500: 0.7, 1000: 0.6}
P99_LIMIT_MS = {100: 20.0, 500: 60.0, 1000: 150.0}
CPU_GROWTH_LIMIT = 1.1

_cpu: dict[int, float] = {}


def _rows(k: int, c: Comparison) -> list[Row]:
    m, f = c.best("mcpgym"), c.best("floor")
    rows = [
        Row(
            f"ws{k}",
            f"WS steps/s, {k} sessions (aggregate)",
            "steps/s",
            m.rate,
            f.rate,
            target=TARGET_RATIO[k],
            note=c.saturation(),
        ),
        Row(
            f"ws{k}_p99",
            f"WS step p99, {k} sessions",
            "ms",
            (m.p99_us or 0) / 1000,
            (f.p99_us or 0) / 1000,
            False,
            limit=P99_LIMIT_MS.get(k),
            note=f"p50 {_fmt((m.p50_us or 0) / 1000, 'ms')} / {_fmt((f.p50_us or 0) / 1000, 'ms')}",
        ),
        Row(
            f"ws{k}_cpu",
            f"server CPU per WS step, {k} sessions",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
        ),
    ]
    _cpu[k] = c.cpu_us("mcpgym")
    return rows


@measurement("sessions", "WS session sweep: K = 10, 100, 500, 1000 (ws1 is K = 1)")
async def sessions(b: Bench) -> list[Row]:
    out: list[Row] = []
    for k in SWEEP:

        def spec(srv: Server, k: int = k) -> dict[str, object]:
            return {**_ws_spec(k)(srv), "latencies": True}

        c = await b.compare(spec, procs=b.cfg.agg_procs, rounds=min(b.cfg.rounds, 2))
        out += _rows(k, c)
    if 100 in _cpu and 1000 in _cpu:
        growth = _cpu[1000] / _cpu[100]
        out.append(
            Row(
                "ws_cpu_growth",
                "server CPU per step, K = 1,000 over K = 100",
                "x",
                growth,
                None,
                False,
                limit=CPU_GROWTH_LIMIT,
                note="flat is ≤ 1.1x",
            )
        )
    return out
