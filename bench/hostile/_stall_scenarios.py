"""The stall scenarios of `bench/reliability.py`: a bystander's added latency while another
session runs (a) the worst Calendar Gym sequence accepted today, (b) a 100 MiB result attempt,
(c) 8 hung sync tools, (d) 1,000 slowloris connections. Each checks that its attack really ran
(every call of the Calendar sequence accepted, the hung calls timed out, the connections open).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from typing import Any

import httpx

from hostile._stall import (
    BenchFailure,
    Figures,
    frame,
    measure_stall,
    modern_call,
    open_session,
    outcome,
    require,
    running,
    stall_rows,
)

HANG_ENV = "bench.hostile._reliability_envs:HangEnv"  # served from the repository root
NY = "America/New_York"
FIVE_YEARS = {"timeMin": "2026-01-01T00:00:00Z", "timeMax": "2031-01-01T00:00:00Z"}


def _event(i: int, **more: Any) -> dict[str, Any]:
    day = f"2026-03-{1 + i % 28:02d}"
    return {
        "calendarId": "primary",
        "summary": f"flood {i} " + "s" * 200,
        "description": "d" * 1800,
        "start": {"dateTime": f"{day}T09:00:00-05:00", "timeZone": NY},
        "end": {"dateTime": f"{day}T10:00:00-05:00", "timeZone": NY},
        **more,
    }


async def stall_calendar(_: argparse.Namespace) -> Figures:
    """The calendar filled with ~2 KiB events up to its quota; then one made a five-year DAILY
    series and as many others WEEKLY ones as a five-year `singleEvents` listing still accepts
    (the per-call occurrence budget: the one past it is deleted again); then five such listings
    and five full listings at `maxResults=2500`: each the most one call may cost today."""
    with running("calendar_gym:CalendarEnv") as server:
        url = server.url("/ws", "ws")
        counts = {"series": 0, "events": 0, "expanded lists": 0, "full lists": 0}
        refused: list[str] = []
        first_list: list[float] = []
        expanded = {"calendarId": "primary", "singleEvents": True, "maxResults": 2500}

        async def call(ws: Any, tool: str, **args: Any) -> tuple[str, dict[str, Any]]:
            await ws.send(frame(tool, **args))
            reply = await asyncio.wait_for(ws.recv(), 300)
            data = json.loads(reply).get("data") or {}
            return outcome(reply), (data.get("observation") or {}).get("result") or {}

        async def worst() -> None:
            ws = await open_session(url)
            try:
                ids: list[str] = []
                while True:  # fill the calendar up to its quota
                    got, made = await call(ws, "events_insert", **_event(len(ids)))
                    if got != "ok":
                        refused.append(got)
                        break
                    ids.append(made["id"])
                counts["events"] = len(ids)
                for n, event_id in enumerate(ids):  # then series, up to the occurrence budget
                    rule = ["RRULE:FREQ=DAILY" if n == 0 else "RRULE:FREQ=WEEKLY"]
                    got, _ = await call(ws, "events_patch", calendarId="primary",
                                        eventId=event_id, recurrence=rule)  # fmt: skip
                    require(got == "ok", f"making event {n} a series was refused: {got}")
                    if (await call(ws, "events_list", **expanded, **FIVE_YEARS))[0] != "ok":
                        got, _ = await call(ws, "events_delete", calendarId="primary",
                                            eventId=event_id)  # fmt: skip
                        require(got == "ok", f"deleting the series past the budget failed: {got}")
                        break
                    counts["series"] += 1
                for _ in range(5):
                    got, _ = await call(ws, "events_list", **expanded, **FIVE_YEARS)
                    require(got == "ok", f"a five-year singleEvents listing failed: {got}")
                    first_list.append(time.perf_counter())
                    counts["expanded lists"] += 1
                for _ in range(5):
                    got, _ = await call(ws, "events_list", calendarId="primary", maxResults=2500)
                    require(got == "ok", f"a full listing failed: {got}")
                    counts["full lists"] += 1
            finally:
                await ws.close()

        seen = await measure_stall(
            url,
            "calendarList_list",
            {"maxResults": 5},
            worst,
            lambda: first_list[0] if first_list else None,
        )
    require(counts["events"] >= 500, f"only {counts['events']} events were accepted")
    require(refused == ["execution_error"], f"the fill stopped on {refused}, not the quota")
    return [
        *stall_rows("worst accepted Calendar sequence", seen),
        ("  max added after the first listing", f"{seen.after or 0:.1f} ms"),
        ("calls of the sequence, all accepted", ", ".join(f"{n} {k}" for k, n in counts.items())),
        ("the fill ended on", "QUOTA_EXCEEDED (events per calendar)"),
    ]


async def stall_result(_: argparse.Namespace) -> Figures:
    """A tool that builds a 100 MiB result, called on `/ws` and on `/mcp`, twice each; and,
    apart, the first `/mcp` request of the server (a ping), which imports the `mcp` package."""
    rows: Figures = []
    with running(HANG_ENV) as server:
        url = server.url("/ws", "ws")
        answers: list[str] = []

        async def on_ws() -> None:
            ws = await open_session(url)
            try:
                for _ in range(2):
                    await ws.send(frame("blob", mib=100))
                    reply = await asyncio.wait_for(ws.recv(), 300)
                    require(
                        "RESULT_TOO_LARGE" in str(reply), f"/ws ran no capped blob: {reply!r:.200}"
                    )
                    answers.append(f"/ws {outcome(reply)} ({len(reply) >> 20} MiB)")
            finally:
                await ws.close()

        async def on_mcp() -> None:
            body, headers = modern_call("blob", {"mib": 100})
            async with httpx.AsyncClient(timeout=300) as http:
                for _ in range(2):
                    r = await http.post(server.url("/mcp"), json=body, headers=headers)
                    require(r.status_code == 200, f"/mcp answered {r.status_code}: {r.text[:200]}")
                    result = r.json().get("result") or {}
                    require(
                        result.get("isError") is True and "RESULT_TOO_LARGE" in r.text,
                        f"/mcp ran no capped blob: {r.text[:200]}",
                    )
                    answers.append(f"/mcp {r.status_code} isError ({len(r.content) >> 20} MiB)")

        async def first_mcp() -> None:  # the `mcp` package is imported on first use
            body, headers = modern_call("ping", {})
            async with httpx.AsyncClient(timeout=300) as http:
                r = await http.post(server.url("/mcp"), json=body, headers=headers)
            require(r.status_code == 200, f"the first /mcp ping answered {r.status_code}")

        for name, load in (("/ws", on_ws), ("a cold /mcp", first_mcp), ("/mcp", on_mcp)):
            seen = await measure_stall(url, "ping", {}, load)
            what = "first /mcp request (imports mcp)" if load is first_mcp else None
            rows += stall_rows(what or f"100 MiB result attempt on {name}", seen)
    require(len(answers) == 4, f"the 100 MiB calls were not all answered: {answers}")
    return [*rows, ("the 100 MiB calls answered (RESULT_TOO_LARGE)", "; ".join(answers))]


async def stall_hang(_: argparse.Namespace) -> Figures:
    """8 sessions hang sync tools for 15 s with timeout_s=1; new sessions open meanwhile."""
    with running(HANG_ENV) as server:
        url = server.url("/ws", "ws")
        opened: list[float] = []
        timed_out: list[str] = []
        detached: list[int] = []

        async def hang_eight() -> None:
            hung = [await open_session(url) for _ in range(8)]
            for ws in hung:
                await ws.send(frame("hang", timeout_s=1, seconds=15))
            for ws in hung:
                timed_out.append(outcome(await ws.recv()))
            for _ in range(5):  # new sessions open while 8 threads are still stuck
                started = time.perf_counter()
                ws = await open_session(url)
                await ws.send(frame("ping"))
                require(outcome(await ws.recv()) == "ok", "a new session's ping failed")
                opened.append(time.perf_counter() - started)
                await ws.close()
            await asyncio.sleep(3.0)
            async with httpx.AsyncClient() as http:
                health = (await http.get(server.url("/health"))).json()
            detached.append(int(health["workers"]["detached"]))
            for ws in hung:
                await ws.close()

        seen = await measure_stall(url, "ping", {}, hang_eight)
    require(timed_out == ["timeout"] * 8, f"the 8 hung calls answered {timed_out}")
    return [
        *stall_rows("8 hung sync tools", seen),
        ("hung calls answered as timeouts", f"{len(timed_out)} of 8"),
        ("new session open + first call while 8 hung", f"{max(opened) * 1000:.1f} ms max"),
        ("stuck calls reported by /health", f"{detached[0]} detached workers"),
    ]


async def _drip(port: int, held: list[Any], dropped: list[int]) -> None:
    """One slowloris connection: a request head one byte a second, never finished."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        dropped.append(1)
        return
    held.append(writer)
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 10_000
    try:
        for byte in head:
            writer.write(bytes([byte]))
            await writer.drain()
            if reader.at_eof():  # the server closed it
                dropped.append(1)
                return
            await asyncio.sleep(1.0)
    except (ConnectionError, OSError):  # the server reset it (our own abort comes after cancel)
        dropped.append(1)


async def slowloris(ns: argparse.Namespace) -> Figures:
    """`ns.slow` (1,000) connections drip request heads while a bystander calls and /health is
    polled; how many the server dropped, and whether /health and new sessions still answered."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, ns.slow * 2 + 512)), hard))
    with running(HANG_ENV) as server:
        url = server.url("/ws", "ws")
        held: list[Any] = []
        dropped: list[int] = []
        health: list[int] = []
        sessions: list[str] = []

        async def attack() -> None:
            drips = [asyncio.create_task(_drip(server.port, held, dropped)) for _ in range(ns.slow)]
            await asyncio.sleep(2.0)
            require(len(held) >= ns.slow * 0.95, f"only {len(held)} slow connections opened")
            async with httpx.AsyncClient(timeout=10) as http:
                for _ in range(20):
                    try:
                        health.append((await http.get(server.url("/health"))).status_code)
                    except httpx.HTTPError:
                        health.append(0)
                    await asyncio.sleep(0.5)
            try:
                ws = await open_session(url)
                await ws.send(frame("ping"))
                sessions.append(outcome(await ws.recv()))
                await ws.close()
            except Exception as exc:  # the figure is whether it worked
                sessions.append(f"refused ({type(exc).__name__})")
            for task in drips:
                task.cancel()
            for writer in held:
                writer.transport.abort()

        seen = await measure_stall(url, "ping", {}, attack)
    if not sessions:
        raise BenchFailure("no new session was tried during the slowloris attack")
    return [
        *stall_rows(f"{ns.slow} slowloris connections", seen),
        ("slow connections opened / dropped by the server", f"{len(held)} / {len(dropped)}"),
        ("/health during the attack (200s of 20)", str(sum(code == 200 for code in health))),
        ("a new session during the attack", sessions[0]),
    ]
