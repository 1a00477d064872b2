"""`just bench-reliability`: mcpgym under hostile but fair load, as figures (not in CI).

Every server is `mcpgym serve` in a subprocess on 127.0.0.1, stopped by PID at the end.

  fuzz         hypothesis-generated hostile inputs over HTTP, WS, /mcp and stdio: count, 5xx,
               replies that are not strict JSON
  stall-cal    a bystander's added latency (max and p99 over its median) while another session
               runs Calendar Gym's worst calls (30 SECONDLY series, then five-year
               singleEvents listings with timeout_s=1); target < 100 ms
  stall-hang   the same while 8 sessions hang sync tools for 15 s with timeout_s=1, and how long
               a new session takes to open meanwhile; target < 100 ms
  impersonate  production /ws and /mcp with every token and identity trick: attempts, successes
               (target 0)
  churn        RSS and open sessions after 10,000 WS connect/disconnect cycles (clean, abrupt and
               mid-call), against the baseline (target ± 10 %)

Usage: python bench/reliability.py [--only NAME ...] [--cycles N] [--fuzz N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import httpx  # noqa: E402
from _servers import Server  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402

Figures = list[tuple[str, str]]


def serve(target: str, *args: str) -> Server:
    command = [sys.executable, "-m", "mcpgym.servers", "serve", target, "--port", "{port}"]
    server = Server(target, [*command, *args])
    server.start(timeout_s=60.0)
    return server


@contextlib.contextmanager
def running(target: str, *args: str) -> Iterator[Server]:
    server = serve(target, *args)
    try:
        yield server
    finally:
        server.stop()


def frame(tool: str, rid: Any = None, timeout_s: float | None = None, **args: Any) -> str:
    body: dict[str, Any] = {
        "type": "step",
        "data": {"type": "call_tool", "tool_name": tool, "arguments": args},
    }
    if rid is not None:
        body["id"] = rid
    if timeout_s is not None:
        body["timeout_s"] = timeout_s
    return json.dumps(body)


async def open_session(url: str, **reset: Any) -> Any:
    ws = await connect(url, max_size=None, ping_interval=None)  # a stalled server is measured
    await ws.send(json.dumps({"type": "reset", "data": reset}))
    await ws.recv()
    return ws


async def bystander(
    url: str, tool: str, stop: asyncio.Event, args: dict[str, Any], ends: list[float] | None = None
) -> list[float]:
    """Latencies (s) of back-to-back cheap calls until `stop` (`ends`: when each one ended)."""
    ws = await open_session(url)
    latencies: list[float] = []
    try:
        while not stop.is_set() or len(latencies) < 20:
            started = time.perf_counter()
            await ws.send(frame(tool, **args))
            await ws.recv()
            latencies.append(time.perf_counter() - started)
            if ends is not None:
                ends.append(time.perf_counter())
            await asyncio.sleep(0.005)
    finally:
        await ws.close()
    return latencies


def stall(baseline: list[float], loaded: list[float]) -> tuple[float, float]:
    """(max, p99) added latency in ms over the unloaded median."""
    base = statistics.median(baseline)
    ordered = sorted(loaded)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (max(loaded) - base) * 1000, (p99 - base) * 1000


async def measure_stall(
    url: str,
    tool: str,
    args: dict[str, Any],
    load: Callable[[], Awaitable[Any]],
    split: Callable[[], float | None] = lambda: None,
) -> tuple[float, float, int, float | None]:
    """(max, p99 added ms, calls, max added ms after `split()`'s moment) while `load` runs."""
    stop = asyncio.Event()
    task = asyncio.create_task(bystander(url, tool, stop, args))
    await asyncio.sleep(1.0)
    stop.set()
    baseline = await task
    stop = asyncio.Event()
    ends: list[float] = []
    task = asyncio.create_task(bystander(url, tool, stop, args, ends))
    try:
        await load()
    finally:
        stop.set()
    loaded = await task
    worst, p99 = stall(baseline, loaded)
    moment = split()
    after = None
    if moment is not None:
        later = [lat for lat, end in zip(loaded, ends, strict=True) if end - lat > moment]
        after = stall(baseline, later)[0] if later else 0.0
    return worst, p99, len(loaded), after


# -- measurements ----------------------------------------------------------------------------------


async def stall_calendar(_: argparse.Namespace) -> Figures:
    with running("calendar_gym:CalendarEnv") as server:
        url = server.url("/ws", "ws")
        cal_args = {"calendarId": "primary", "maxResults": 5}

        first_done: list[float] = []
        outcomes: list[str] = []

        async def worst_calls() -> None:
            ws = await open_session(url)
            try:
                for i in range(30):
                    await ws.send(
                        frame(
                            "events_insert",
                            calendarId="primary",
                            summary=f"flood {i}",
                            start={"dateTime": "2026-03-05T09:00:00Z"},
                            end={"dateTime": "2026-03-05T09:00:01Z"},
                            recurrence=["RRULE:FREQ=SECONDLY"],
                        )
                    )
                    await ws.recv()
                for _ in range(5):
                    await ws.send(
                        frame(
                            "events_list",
                            timeout_s=1,
                            calendarId="primary",
                            singleEvents=True,
                            timeMin="2026-01-01T00:00:00Z",
                            timeMax="2031-01-01T00:00:00Z",
                        )
                    )
                    reply = json.loads(await asyncio.wait_for(ws.recv(), 300))
                    first_done.append(time.perf_counter())
                    obs = reply.get("data", {}).get("observation") or {}
                    error = obs.get("error") or reply.get("data", {})
                    outcomes.append(str(error.get("error_type") or error.get("code") or "ok"))
            finally:
                await ws.close()

        started = time.perf_counter()
        worst, p99, n, after = await measure_stall(
            url,
            "calendarList_list",
            cal_args,
            worst_calls,
            lambda: first_done[0] if first_done else None,
        )
        took = time.perf_counter() - started
    return [
        ("bystander max added latency, worst calendar calls", f"{worst:.1f} ms (target < 100)"),
        ("  of which after the first worst call (demoted)", f"{after or 0:.1f} ms"),
        ("bystander p99 added latency, worst calendar calls", f"{p99:.1f} ms"),
        ("bystander calls measured / attack duration", f"{n} / {took:.1f} s"),
        ("the 5 worst calls answered", ", ".join(outcomes)),
    ]


async def stall_hang(_: argparse.Namespace) -> Figures:
    with running("bench._reliability_envs:HangEnv") as server:
        url = server.url("/ws", "ws")
        opened: list[float] = []

        async def hang_eight() -> None:
            hung = [await open_session(url) for _ in range(8)]
            for ws in hung:
                await ws.send(frame("hang", timeout_s=1, seconds=15))
            for ws in hung:
                await ws.recv()  # every one times out after 1 s
            for _ in range(5):  # new sessions open while 8 threads are still stuck
                started = time.perf_counter()
                ws = await open_session(url)
                await ws.send(frame("ping"))
                await ws.recv()
                opened.append(time.perf_counter() - started)
                await ws.close()
            await asyncio.sleep(3.0)
            async with httpx.AsyncClient() as http:
                health = (await http.get(server.url("/health"))).json()
            opened.append(float(health["workers"]["detached"]))
            for ws in hung:
                await ws.close()

        worst, p99, _, _ = await measure_stall(url, "ping", {}, hang_eight)
    detached = int(opened.pop())
    return [
        ("bystander max added latency, 8 hung sync calls", f"{worst:.1f} ms (target < 100)"),
        ("bystander p99 added latency, 8 hung sync calls", f"{p99:.1f} ms"),
        ("new session open + first call while 8 hung", f"{max(opened) * 1000:.1f} ms max"),
        ("stuck calls reported by /health", f"{detached} detached workers"),
    ]


WHEN = {"start": {"dateTime": "2026-03-05T10:00:00Z"}, "end": {"dateTime": "2026-03-05T11:00:00Z"}}


def _titles(result: dict[str, Any]) -> bool:
    """Whether event titles came back (a free/busy view carries none)."""
    items = (result.get("structuredContent") or {}).get("items", [])
    return any(item.get("summary") for item in items)


# Bob (a reader of Alice's calendar, nothing of Carol's) tries to act beyond his grants, or as
# someone else by naming them in the arguments; a "success" is any call that works anyway.
BOB_TRIES: list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], bool]]] = [
    ("events_insert", {"calendarId": "alice@acme.test", "summary": "x", **WHEN}, lambda r: True),
    ("events_list", {"calendarId": "carol@acme.test"}, _titles),
    ("events_list", {"calendarId": "primary", "user": "alice@acme.test"}, lambda r: True),
    ("calendars_delete", {"calendarId": "alice@acme.test"}, lambda r: True),
    (
        "acl_insert",
        {
            "calendarId": "alice@acme.test",
            "rule": {"role": "owner", "scope": {"type": "user", "value": "bob@acme.test"}},
        },
        lambda r: True,
    ),
]


async def impersonate(_: argparse.Namespace) -> Figures:
    principals = BENCH.parent / "build" / "bench-principals.json"
    principals.parent.mkdir(exist_ok=True)
    principals.write_text(
        json.dumps({"tok-alice": {"user": "alice@acme.test"}, "tok-bob": {"user": "bob@acme.test"}})
    )
    args = ["--mode", "production", "--principals", str(principals)]
    args += ["--token", "tok-op", "--production-ws"]
    attempts = successes = 0
    with running("calendar_gym:CalendarEnv", *args) as server:
        ws_url = server.url("/ws", "ws")
        for token in ("tok-alice", "tok-bob", "wrong", "", "tok-alice ", "TOK-OP"):
            for reset_user in ("alice@acme.test", "bob@acme.test"):
                attempts += 1
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                try:
                    async with connect(ws_url, additional_headers=headers) as ws:
                        await ws.send(json.dumps({"type": "reset", "data": {"user": reset_user}}))
                        await ws.recv()
                        successes += 1
                except InvalidStatus:
                    pass
        mcp = server.url("/mcp")
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "0"},
            },
        }
        accept = {"Accept": "application/json, text/event-stream"}
        bob = {"Authorization": "Bearer tok-bob"}
        async with httpx.AsyncClient(timeout=30) as http:
            attempts += 1  # the operator token is no identity on /mcp
            r = await http.post(
                mcp, json=init, headers={**accept, "Authorization": "Bearer tok-op"}
            )
            successes += r.status_code < 400
            r = await http.post(mcp, json=init, headers={**accept, **bob})
            session = {**accept, **bob, "Mcp-Session-Id": r.headers["mcp-session-id"]}
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(mcp, json=note, headers=session)
            for name, arguments, leaked in BOB_TRIES:
                attempts += 1
                call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
                call["params"] = {"name": name, "arguments": arguments}
                result = (await http.post(mcp, json=call, headers=session)).json().get("result")
                successes += bool(result) and not result.get("isError") and leaked(result)
    return [
        ("impersonation attempts", str(attempts)),
        ("impersonation successes", f"{successes} (target 0)"),
    ]


async def fuzz(ns: argparse.Namespace) -> Figures:
    from _hostile import run_fuzz

    with running("mcpgym.examples.guess:GuessEnv", "--max-sessions", "64") as server:
        counts = await asyncio.to_thread(run_fuzz, server.url(""), ns.fuzz)
        health = await asyncio.to_thread(httpx.get, server.url("/health"))
        healthy = health.json()["status"] == "healthy"
    rows = [
        (f"fuzzed inputs over {t}", f"{n} sent, {e} 5xx, {bad} not strict JSON")
        for t, (n, e, bad) in counts.items()
    ]
    return [*rows, ("server healthy after", str(healthy))]


async def churn(ns: argparse.Namespace) -> Figures:
    from _churn import churn as run_churn

    with running("mcpgym.examples.guess:GuessEnv", "--max-sessions", "512") as server:
        return await run_churn(server, ns.cycles)


MEASUREMENTS: dict[str, Callable[[argparse.Namespace], Awaitable[Figures]]] = {
    "fuzz": fuzz,
    "stall-cal": stall_calendar,
    "stall-hang": stall_hang,
    "impersonate": impersonate,
    "churn": churn,  # bench/_churn.py
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", action="append", choices=sorted(MEASUREMENTS), default=[])
    parser.add_argument("--cycles", type=int, default=10_000, help="churn cycles (default 10,000)")
    parser.add_argument(
        "--fuzz", type=int, default=500, help="fuzzed inputs per transport (default 500)"
    )
    ns = parser.parse_args()
    for name in ns.only or list(MEASUREMENTS):
        started = time.perf_counter()
        figures = asyncio.run(MEASUREMENTS[name](ns))
        print(f"\n== {name} ({time.perf_counter() - started:.1f} s)")
        for label, value in figures:
            print(f"  {label:<55} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
