"""Calendar Gym micro-benchmark: session reset time and the cost of a typical `events_list`.

Measured in-process (no server): `reset` builds a private SQLite copy of the seed world from the
per-process template, and `astep(CallToolAction("events_list", ...))` goes through the real SDK
path (scope check, schema validation, tool, rendering). The tool body is also timed alone, so the
difference is the call path's overhead. The two are timed alternately, call by call, in one event
loop, and the overhead is the median of the paired differences: drift (CPU frequency, other load)
hits both sides of a pair alike. The parts of the overhead are timed the same way: the schema walk
(`check_arguments`, Calendar Gym's all-errors-at-once check), `ToolSpec.validate`,
`ToolSpec.dump_result`, and the rest (lookup, scopes, transaction, observation, reward).
Bounded to a few seconds; `bench/run.py` runs it as its `calendar` measurement.

Run: `python bench/calendar_bench.py [--resets 300] [--calls 300] [--json]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from calendar_gym import CalendarEnv
from mcpgym import CallToolAction

EVENTS_LIST = {
    "calendarId": "primary",
    "timeMin": "2026-03-09T00:00:00-04:00",
    "timeMax": "2026-03-16T00:00:00-04:00",
    "singleEvents": True,
    "orderBy": "startTime",
}
RESET_TARGET_MS = 5.0


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50": statistics.median(ordered),
        "p95": ordered[int(len(ordered) * 0.95) - 1],
        "mean": statistics.fmean(ordered),
    }


def _time(fn: Callable[[], Any], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def bench_reset(n: int) -> dict[str, float]:
    """Reset latency in milliseconds (the template is built before timing starts)."""
    env = CalendarEnv()
    env.reset(seed=0)
    seeds = iter(range(1, n + 1))
    samples = _time(lambda: env.reset(seed=next(seeds)), n)
    env.close()
    return {k: v * 1000 for k, v in _stats(samples).items()}


async def _paired_samples(env: CalendarEnv, n: int) -> dict[str, list[float]]:
    """Per call, in turn: the whole `astep`, the tool body alone, and each timed part."""
    from calendar_gym.tools.validation import check_arguments

    spec = env.tool_specs["events_list"]
    action = CallToolAction(tool_name="events_list", arguments=EVENTS_LIST)
    kwargs = spec.validate(EVENTS_LIST)
    value = env.events_list(**kwargs)
    parts: dict[str, Callable[[], Any]] = {
        "tool body": lambda: env.events_list(**kwargs),
        "schema walk": lambda: check_arguments(
            spec.input_schema, EVENTS_LIST, tool="events_list", default_tz="UTC"
        ),
        "validate": lambda: spec.validate(EVENTS_LIST),
        "dump_result": lambda: spec.dump_result(value),
    }
    out: dict[str, list[float]] = {"astep": []} | {k: [] for k in parts}
    perf = time.perf_counter
    for i in range(n + n // 10):  # the first tenth warms up
        start = perf()
        obs = await env.astep(action)
        took = perf() - start
        assert obs.error is None, obs.error  # type: ignore[attr-defined]
        if i >= n // 10:
            out["astep"].append(took)
        for name, fn in parts.items():
            start = perf()
            fn()
            took = perf() - start
            if i >= n // 10:
                out[name].append(took)
    return out


def bench_events_list(n: int) -> dict[str, Any]:
    """A one-week, expanded `events_list` on the acting user's calendar, in microseconds."""
    env = CalendarEnv()
    env.reset(seed=0)
    items = len(env.call_tool_sync("events_list", EVENTS_LIST)["items"])
    samples = asyncio.run(_paired_samples(env, n))
    env.close()
    astep = {k: v * 1e6 for k, v in _stats(samples["astep"]).items()}
    tool = {k: v * 1e6 for k, v in _stats(samples["tool body"]).items()}
    paired = [a - b for a, b in zip(samples["astep"], samples["tool body"], strict=True)]
    sdk = {name: statistics.median(samples[name]) * 1e6 for name in ("validate", "dump_result")}
    walk = statistics.median(samples["schema walk"]) * 1e6
    overhead = statistics.median(paired) * 1e6
    return {
        "items": items,
        "astep_us": astep,
        "tool_body_us": tool,
        "overhead_p50_us": overhead,
        "overhead_parts_us": {
            "schema walk": walk,
            "validate": sdk["validate"],
            "dump_result": sdk["dump_result"],
            "rest": overhead - walk - sdk["validate"] - sdk["dump_result"],
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resets", type=int, default=300)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    reset = bench_reset(args.resets)
    listing = bench_events_list(args.calls)
    result = {"reset_ms": reset, "events_list": listing, "seconds": time.perf_counter() - started}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        ok = "ok" if reset["p50"] <= RESET_TARGET_MS else f"ABOVE the {RESET_TARGET_MS} ms target"
        print(f"calendar reset      p50 {reset['p50']:.3f} ms  p95 {reset['p95']:.3f} ms  ({ok})")
        a, t = listing["astep_us"], listing["tool_body_us"]
        print(
            f"events_list (astep) p50 {a['p50']:.0f} us  p95 {a['p95']:.0f} us  "
            f"({listing['items']} items, one week, singleEvents)"
        )
        print(f"  tool body alone   p50 {t['p50']:.0f} us  p95 {t['p95']:.0f} us")
        print(f"  call-path overhead p50 {listing['overhead_p50_us']:.0f} us (paired), of which:")
        for name, us in listing["overhead_parts_us"].items():
            print(f"    {name:<12} {us:6.1f} us")
        print(f"({result['seconds']:.1f} s)")
    return 0 if reset["p50"] <= RESET_TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
