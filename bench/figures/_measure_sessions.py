"""The session sweep (issue 17): aggregate WS tool-call steps/s, p50/p99 and server CPU per step
at K = 1, 10, 100, 500 and 1,000 concurrent sessions, beside the floor (and the old asyncio/h11
floor as a second column),
with the targets as ✓/✗ rows: aggregate ≥ 0.7x the floor up to K = 500 and ≥ 0.6x at 1,000; p99
≤ 20 / 60 / 150 ms at K = 100 / 500 / 1,000; server CPU per step flat (≤ 1.1x) from K = 100 to
1,000. `mcpgym serve` runs with its default `--max-sessions`, so a default that cannot hold the
sweep fails it (CAPACITY_REACHED replies are errors).

`sessions-pool` is the same sweep against `mcpgym-pool` (the game with `blocking = True`, the
default, so every step crosses the worker pool): the pool's cost per step must stay flat too."""

from __future__ import annotations

from calls._bench import Bench, Comparison, measurement
from calls._issue_table import Line as _Line
from calls._servers import Server
from calls._table import Row, _fmt

from figures._measure_load import _ws_spec

SWEEP = (1, 10, 100, 500, 1000)
TARGET_RATIO = {1: 0.6, 10: 0.7, 100: 0.7, 500: 0.7, 1000: 0.6}
P99_LIMIT_MS = {100: 20.0, 500: 60.0, 1000: 150.0}
CPU_GROWTH_LIMIT = 1.1
ROUNDS_REWARM, ROUNDS_COUNTED = 2, 8


def _target_text(k: int) -> str:
    p99 = P99_LIMIT_MS.get(k)
    return f"≥ {TARGET_RATIO[k]}x" + (f"; p99 ≤ {p99:.0f} ms" if p99 else "")


def _rows(k: int, c: Comparison, tag: str = "", what: str = "") -> list[Row]:
    m, f = c.best("mcpgym"), c.best("floor")
    rows = [
        Row(
            f"ws{tag}{k}",
            f"WS steps/s{what}, {k} sessions (aggregate)",
            "steps/s",
            m.rate,
            f.rate,
            target=TARGET_RATIO[k],
            note=c.saturation(),
            floor2=c.legacy(),
        ),
        Row(
            f"ws{tag}{k}_p99",
            f"WS step p99{what}, {k} sessions",
            "ms",
            (m.p99_us or 0) / 1000,
            (f.p99_us or 0) / 1000,
            False,
            limit=P99_LIMIT_MS.get(k),
            note=f"p50 {_fmt((m.p50_us or 0) / 1000, 'ms')} / {_fmt((f.p50_us or 0) / 1000, 'ms')}",
        ),
        Row(
            f"ws{tag}{k}_cpu",
            f"server CPU per WS step{what}, {k} sessions",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
            floor2=c.legacy("cpu"),
        ),
    ]
    return rows


def _windows(b: Bench, k: int) -> dict[str, float]:
    """Re-warm and timed window long enough for K sessions: at K = 1,000 one round of every
    session takes ~0.2-0.5 s here, so the preset's 0.2 s re-warm ended inside the burst of the
    paused clients' first steps (all K at once), and a 2 s window held only a few rounds. Both
    grow with K: at least `ROUNDS_REWARM` and `ROUNDS_COUNTED` rounds at 2,000 steps/s."""
    if b.cfg.quick:
        return {}
    round_s = k / 2000
    return {
        "rewarm_s": max(b.cfg.rewarm_s, ROUNDS_REWARM * round_s),
        "duration_s": max(b.cfg.duration_s, ROUNDS_COUNTED * round_s),
    }


async def _sweep(b: Bench, server: str, tag: str = "", what: str = "") -> list[Row]:
    out: list[Row] = []
    cpu: dict[int, float] = {}
    floor_cpu: dict[int, float] = {}
    for k in SWEEP:

        def spec(srv: Server, k: int = k) -> dict[str, object]:
            return {**_ws_spec(k)(srv), "latencies": True, **_windows(b, k)}

        procs = 1 if k == 1 else b.cfg.agg_procs
        c = await b.compare(
            spec, procs=procs, rounds=min(b.cfg.rounds, 2), mcpgym=server, legacy=tag == "k"
        )
        out += _rows(k, c, tag, what)
        cpu[k] = c.cpu_us("mcpgym")
        floor_cpu[k] = c.cpu_us("floor")
    if 100 in cpu and 1000 in cpu:
        growth = cpu[1000] / cpu[100]
        floor_growth = floor_cpu[1000] / floor_cpu[100]
        out.append(
            Row(
                f"ws{tag}_cpu_growth",
                f"server CPU per step{what}, K = 1,000 over K = 100",
                "x",
                growth,
                None,
                False,
                limit=CPU_GROWTH_LIMIT,
                note=f"flat is ≤ {CPU_GROWTH_LIMIT}x; the floor's: {floor_growth:.2f}x",
            )
        )
    return out


@measurement("sessions", "WS session sweep: K = 1, 10, 100, 500, 1000", budget_s=150)
async def sessions(b: Bench) -> list[Row]:
    return await _sweep(b, "mcpgym", "k")  # keys wsk1 ... wsk1000: ws1 and ws100 are ws1/ws100's


@measurement("sessions-pool", "the sweep with every step in the worker pool", budget_s=100)
async def sessions_pool(b: Bench) -> list[Row]:
    return await _sweep(b, "mcpgym-pool", "pool", " (worker pool)")


# bench/calls/_issue_table.py: this module's lines of issue 17's table
ISSUE_TABLE = [
    _Line(f"WS K={k} aggregate steps/s; p99", (f"wsk{k}", f"wsk{k}_p99"), _target_text(k))
    for k in SWEEP
] + [
    _Line(
        "server CPU per step, K=100 → 1000",
        ("wsk_cpu_growth", "wsk100_cpu", "wsk1000_cpu"),
        f"flat (≤ {CPU_GROWTH_LIMIT}x)",
    ),
    _Line(
        "same, every step in the worker pool",
        ("wspool_cpu_growth", "wspool100_cpu", "wspool1000_cpu"),
        f"flat (≤ {CPU_GROWTH_LIMIT}x)",
    ),
]
