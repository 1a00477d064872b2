"""`just bench-reliability`: mcpgym under hostile but fair load, as figures (not in CI).

Every server is `mcpgym serve` in a subprocess on 127.0.0.1, stopped by PID at the end. Every
figure checks that the work it times really ran (bench/hostile/_stall.py): a measurement whose
attack
was refused, or whose bystander's calls failed, fails the run (exit 1) instead of printing.

  fuzz         hypothesis-generated hostile inputs over every surface: count, 5xx, replies that
               are not strict JSON (target >= 5,000 inputs, 0 5xx)
  stall-cal    a bystander's added latency while another session runs the worst Calendar Gym
               sequence accepted today (bench/hostile/_stall_scenarios.py); target p99 < 100 ms
  stall-result the same during 100 MiB result attempts on /ws and /mcp
  stall-hang   the same while 8 sessions hang sync tools for 15 s with timeout_s=1
  slowloris    the same while 1,000 connections drip request heads; /health and a new session
  impersonate  production /ws and /mcp with every token and identity trick: attempts, successes
               (target 0), after a control that the real tokens work
  churn        RSS and open sessions after 10,000 WS connect/disconnect cycles (target ± 10 %)
  episodes     an episode record after 10,000 hostile calls (target <= the documented bound);
               RSS after 10,000 episodes opened and abandoned (target ± 10 %)
  leftovers    processes left 30 s after SIGKILL of `mcpgym eval --pool process:3` and of a
               bridge host (target 0)

Usage: python bench/reliability.py [--only NAME ...] [--cycles N] [--fuzz N] [--slow N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import httpx  # noqa: E402
from hostile._episodes import episodes  # noqa: E402
from hostile._leftovers import leftovers  # noqa: E402
from hostile._stall import BenchFailure, Figures, judge, require, running  # noqa: E402
from hostile._stall_scenarios import slowloris, stall_calendar, stall_hang, stall_result  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402

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
        # the control: the operator's own token opens /ws, so a refusal below is a refusal
        async with connect(ws_url, additional_headers={"Authorization": "Bearer tok-op"}) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"user": "alice@acme.test"}}))
            control = json.loads(await ws.recv())
        require(control.get("type") == "observation", f"the operator's /ws reset failed: {control}")
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
            # the control: Bob reading his own calendar works
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
            call["params"] = {"name": "events_list", "arguments": {"calendarId": "primary"}}
            own = (await http.post(mcp, json=call, headers=session)).json().get("result") or {}
            require(bool(own) and not own.get("isError"), f"Bob's own events_list failed: {own}")
    return [
        ("impersonation attempts", str(attempts)),
        ("impersonation successes", judge(str(successes), "0", successes == 0)),
    ]


async def fuzz(ns: argparse.Namespace) -> Figures:
    from hostile._hostile import run_fuzz

    with running("mcpgym.examples.guess:GuessEnv", "--max-sessions", "64") as server:
        counts = await asyncio.to_thread(run_fuzz, server.url(""), ns.fuzz)
        health = await asyncio.to_thread(httpx.get, server.url("/health"))
        healthy = health.json()["status"] == "healthy"
    rows = [
        (
            f"fuzzed inputs over {t}",
            judge(
                f"{n} sent, {e} 5xx, {bad} not strict JSON",
                "0 5xx, 0 not JSON",
                e == 0 and bad == 0,
            ),
        )
        for t, (n, e, bad) in counts.items()
    ]
    total = sum(n for n, _, _ in counts.values())
    require(all(n >= ns.fuzz for n, _, _ in counts.values()), f"not every input was sent: {counts}")
    fives = sum(e for _, e, _ in counts.values())
    return [
        *rows,
        (
            "fuzzed inputs in all / 5xx in all",
            judge(f"{total:,} / {fives}", ">= 5,000 / 0", total >= 5000 and fives == 0),
        ),
        ("server healthy after", judge(str(healthy), "True", healthy)),
    ]


async def churn(ns: argparse.Namespace) -> Figures:
    from hostile._churn import churn as run_churn

    with running("mcpgym.examples.guess:GuessEnv", "--max-sessions", "512") as server:
        return await run_churn(server, ns.cycles)


MEASUREMENTS: dict[str, Callable[[argparse.Namespace], Awaitable[Figures]]] = {
    "fuzz": fuzz,
    "stall-cal": stall_calendar,
    "stall-result": stall_result,
    "stall-hang": stall_hang,
    "slowloris": slowloris,
    "episodes": episodes,  # bench/hostile/_episodes.py
    "leftovers": leftovers,  # bench/hostile/_leftovers.py
    "impersonate": impersonate,
    "churn": churn,  # bench/hostile/_churn.py
}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", action="append", choices=sorted(MEASUREMENTS), default=[])
    parser.add_argument("--cycles", type=int, default=10_000, help="churn cycles (default 10,000)")
    parser.add_argument(
        "--fuzz", type=int, default=1000, help="fuzzed inputs per surface (default 1,000)"
    )
    parser.add_argument("--slow", type=int, default=1000, help="slowloris connections (1,000)")
    parser.add_argument("--hostile", type=int, default=10_000, help="hostile episode calls")
    parser.add_argument("--episodes", type=int, default=10_000, help="abandoned episodes")
    ns = parser.parse_args()
    failed: list[str] = []
    missed: list[str] = []  # acceptance figures that ran but missed their target (✗)
    for name in ns.only or list(MEASUREMENTS):
        started = time.perf_counter()
        one, five, fifteen = os.getloadavg()
        try:
            figures = asyncio.run(MEASUREMENTS[name](ns))
        except BenchFailure as exc:
            print(f"\n== {name}: FAILED, the work it times did not run: {exc}")
            failed.append(name)
            continue
        except Exception as exc:  # one broken figure must not hide the rest
            print(f"\n== {name}: FAILED with {type(exc).__name__}: {exc}")
            failed.append(name)
            continue
        took = time.perf_counter() - started
        print(
            f"\n== {name} ({took:.1f} s; load average {one:.2f} {five:.2f} {fifteen:.2f} at the "
            f"start, {os.getloadavg()[0]:.2f} at the end)"
        )
        end_load = os.getloadavg()[0]
        for label, value in figures:
            print(f"  {label:<60} {value}")
            if value.endswith("✗"):
                missed.append(f"{name}: {label.strip()} = {value} (load {one:.2f}→{end_load:.2f})")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if missed:
        print("MISSED TARGETS (✗):\n  " + "\n  ".join(missed))
    if failed:
        print(f"FAILED (the work did not run): {', '.join(failed)}")
    if not missed and not failed:
        print("every acceptance figure met its target ✓")
    return 1 if failed or missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
