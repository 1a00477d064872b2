"""`bench/reliability.py episodes`: operator-opened MCP episodes under abuse.

- record bytes: one episode takes `ns.hostile` (10,000) hostile `tools/call`s — 32 KiB arguments,
  invalid and unknown tools, poison numbers — then its record is read; its size is printed
  against the documented bound when the server publishes one (`episodes.RECORD_BOUND`).
- RSS: `ns.episodes` (10,000) episodes are opened (one call each) and abandoned, 500 at a time,
  against a server whose idle reaper ends them; its RSS is read against a warmed-up baseline.

Each counts its accepted requests and fails the run when they did not happen.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from hostile._churn import _rss_anon_mb  # pyright: ignore[reportPrivateUsage]
from hostile._stall import Figures, judge, modern_call, require, running
from mcpgym.servers.mcp import episodes as server_episodes

TOKEN = "bench-op"
_PLAYING = 50  # episodes being opened and played at once (under httpx's 100 connections)
OP = {"Authorization": f"Bearer {TOKEN}"}
BATCH = 500
IDLE_S = 10


def _hostile_call(i: int) -> tuple[str, dict[str, str]]:
    blob = "h" * 32 * 1024
    arguments: list[Any] = [
        {"n": blob},
        {"n": 50, "extra": blob},
        {"nested": [[[[blob[:1024]]]]] * 16},
    ]
    tool = ("guess", "no_such_tool", "guess")[i % 3]
    body, headers = modern_call(tool, arguments[i % 3], rid=i)
    text = json.dumps(body)
    if i % 7 == 0:  # a poison number the strict parser must refuse
        text = text.replace(f'"id": {i}', '"id": 1e999', 1)
    return text, headers


def _documented_bound() -> int | None:
    return getattr(server_episodes, "RECORD_BOUND", None)


async def _record_bytes(n: int) -> Figures:
    with running("mcpgym.examples.guess:GuessEnv", "--token", TOKEN) as server:
        async with httpx.AsyncClient(timeout=120) as http:
            r = await http.post(
                server.url("/mcp/episodes"), json={"reset": {"seed": 1}}, headers=OP
            )
            require(r.status_code == 201, f"opening the episode answered {r.status_code}")
            url = server.url(r.json()["url"])
            statuses: dict[int, int] = {}
            sem = asyncio.Semaphore(8)

            async def one(i: int) -> None:
                async with sem:
                    text, headers = _hostile_call(i)
                    try:
                        code = (await http.post(url, content=text, headers=headers)).status_code
                    except httpx.TransportError:  # a dropped connection: counted, not hidden
                        code = 0
                    statuses[code] = statuses.get(code, 0) + 1

            await asyncio.gather(*(one(i) for i in range(n)))
            record = await http.get(server.url(r.json()["url"].replace("/mcp?episode=",
                                                                       "/mcp/episodes/")),
                                    headers=OP)  # fmt: skip
            require(record.status_code == 200, f"reading the record answered {record.status_code}")
            size = len(record.content)
    sent = sum(statuses.values())
    require(sent == n, f"{sent} of {n} hostile calls were answered")
    fives = sum(v for k, v in statuses.items() if k >= 500)
    bound = _documented_bound()
    require(bound is not None, "the server publishes no record bound (episodes.RECORD_BOUND)")
    assert bound is not None
    return [
        (
            f"episode record after {n:,} hostile calls",
            judge(f"{size:,} bytes", f"<= {bound:,}, RECORD_BOUND", size <= bound),
        ),
        (
            "  the hostile calls' statuses",
            ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())),
        ),
        ("  5xx among them", judge(str(fives), "0", fives == 0)),
    ]


async def _abandoned(n: int) -> Figures:
    # the idle timeout outlasts opening a whole batch on a loaded machine (at 3 s, 500
    # episodes opened at once were reaped before they were played: the figure measured nothing)
    args = ["--token", TOKEN, "--idle-timeout", str(IDLE_S), "--max-mcp-sessions", str(BATCH * 2)]
    with running("mcpgym.examples.guess:GuessEnv", *args) as server:
        async with httpx.AsyncClient(timeout=120) as http:
            opened = 0
            playing = asyncio.Semaphore(_PLAYING)

            async def batch(count: int) -> int:
                async def one() -> int:
                    # At most `_PLAYING` at once: with all of a batch in flight, the client's
                    # connection pool held an opened episode's call past the idle timeout, and the
                    # reaper rightly ended it unplayed (404 "the episode has ended").
                    async with playing:
                        try:
                            return await play()
                        except httpx.TransportError:
                            return 0

                async def play() -> int:
                    r = await http.post(
                        server.url("/mcp/episodes"), json={"reset": {"seed": 1}}, headers=OP
                    )
                    if r.status_code != 201:
                        return 0
                    call, headers = modern_call("guess", {"n": 50})
                    reply = await http.post(server.url(r.json()["url"]), json=call, headers=headers)
                    return int(reply.status_code == 200)

                done = await asyncio.gather(*(one() for _ in range(count)))
                await asyncio.sleep(IDLE_S + 6.0)  # past the idle timeout: the reaper ends them
                return sum(done)

            for _ in range(2):  # warm-up: allocator arenas, worker threads, caches
                await batch(BATCH)
            base_rss, base_anon = server.rss_mb(), _rss_anon_mb(server.pid)
            started = time.perf_counter()
            for start in range(0, n, BATCH):
                opened += await batch(min(BATCH, n - start))
            took = time.perf_counter() - started
            rss, anon = server.rss_mb(), _rss_anon_mb(server.pid)
    require(opened == n, f"only {opened} of {n} episodes were opened and played")
    change = (rss / base_rss - 1) * 100
    return [
        (f"episodes opened, played once and abandoned ({n / took:.0f}/s)", f"{opened:,}"),
        (
            "server RSS before / after",
            judge(f"{base_rss:.1f} / {rss:.1f} MB ({change:+.1f} %)", "± 10 %", abs(change) <= 10),
        ),
        ("  of which anonymous before / after", f"{base_anon:.1f} / {anon:.1f} MB"),
    ]


async def episodes(ns: Any) -> Figures:
    """Both measurements."""
    return [*(await _record_bytes(ns.hostile)), *(await _abandoned(ns.episodes))]
