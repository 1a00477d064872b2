"""A bystander's added latency while something hostile runs, for `bench/reliability.py`.

Every figure here counts the work it times and fails the run (`BenchFailure`) when that work did
not happen: a bystander whose calls failed measured nothing, and an attack the server refused
before it started stalls nobody. A measurement prints only after its checks passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from calls._servers import Server
from websockets.asyncio.client import connect

Figures = list[tuple[str, str]]
MIN_BYSTANDER_CALLS = 20


class BenchFailure(RuntimeError):
    """The work a figure times did not (all) run: the figure would measure nothing."""


def judge(value: str, target: str, met: bool) -> str:
    """An acceptance figure's value with its target and a verdict: `5.3 ms (target < 100) ✓`.
    `bench/reliability.py` counts the ✗ and fails the run on any."""
    return f"{value} (target {target}) {'✓' if met else '✗'}"


def require(condition: bool, what: str) -> None:
    """Fail the run unless `condition`; `what` says which work did not happen."""
    if not condition:
        raise BenchFailure(what)


def serve(target: str, *args: str) -> Server:
    """`mcpgym serve TARGET ARGS` on a free port, healthy."""
    command = [sys.executable, "-m", "mcpgym.servers", "serve", target, "--port", "{port}"]
    server = Server(target, [*command, *args])
    server.start(timeout_s=60.0)
    return server


@contextlib.contextmanager
def running(target: str, *args: str) -> Iterator[Server]:
    """`serve`, stopped by PID when the block ends."""
    server = serve(target, *args)
    try:
        yield server
    finally:
        server.stop()


def frame(tool: str, rid: Any = None, timeout_s: float | None = None, **args: Any) -> str:
    """A `/ws` step frame calling `tool`."""
    body: dict[str, Any] = {
        "type": "step",
        "data": {"type": "call_tool", "tool_name": tool, "arguments": args},
    }
    if rid is not None:
        body["id"] = rid
    if timeout_s is not None:
        body["timeout_s"] = timeout_s
    return json.dumps(body)


def outcome(reply: str | bytes) -> str:
    """`ok`, or the error type / code of a `/ws` reply."""
    data = json.loads(reply).get("data") or {}
    obs = data.get("observation") or {}
    error = obs.get("error") or (data if "code" in data else None)
    if not error:
        return "ok"
    return str(error.get("error_type") or error.get("code") or "error")


async def open_session(url: str, **reset: Any) -> Any:
    """A `/ws` session after its reset (no size limit of our own: a stalled server is measured)."""
    ws = await connect(url, max_size=None, ping_interval=None, open_timeout=60)
    await ws.send(json.dumps({"type": "reset", "data": reset}))
    require(json.loads(await ws.recv())["type"] == "observation", "the bystander's reset failed")
    return ws


@dataclass
class Bystander:
    """Back-to-back cheap calls on one session: latencies, when each ended, how many were ok."""

    latencies: list[float] = field(default_factory=list[float])
    ends: list[float] = field(default_factory=list[float])
    ok: int = 0


async def bystander(
    url: str,
    tool: str,
    stop: asyncio.Event,
    args: dict[str, Any],
    ready: asyncio.Event | None = None,
) -> Bystander:
    """Calls until `stop` (and at least `MIN_BYSTANDER_CALLS`); `ready` is set once its session
    is open (a bystander is an established session, not a newcomer racing the attack)."""
    seen = Bystander()
    ws = await open_session(url)
    if ready is not None:
        ready.set()
    try:
        while not stop.is_set() or len(seen.latencies) < MIN_BYSTANDER_CALLS:
            started = time.perf_counter()
            await ws.send(frame(tool, **args))
            reply = await ws.recv()
            seen.latencies.append(time.perf_counter() - started)
            seen.ends.append(time.perf_counter())
            seen.ok += outcome(reply) == "ok"
            await asyncio.sleep(0.005)
    finally:
        await ws.close()
    return seen


def stall(baseline: list[float], loaded: list[float]) -> tuple[float, float]:
    """(max, p99) added latency in ms over the unloaded median."""
    base = statistics.median(baseline)
    ordered = sorted(loaded)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (max(loaded) - base) * 1000, (p99 - base) * 1000


@dataclass
class Stall:
    """What `measure_stall` saw: added ms (max, p99), bystander calls, max added after `split`."""

    worst: float
    p99: float
    calls: int
    after: float | None


async def measure_stall(
    url: str,
    tool: str,
    args: dict[str, Any],
    load: Callable[[], Awaitable[Any]],
    split: Callable[[], float | None] = lambda: None,
) -> Stall:
    """The bystander's latency unloaded for 1 s, then while `load` runs; every bystander call
    must have succeeded, or the run fails."""
    stop = asyncio.Event()
    task = asyncio.create_task(bystander(url, tool, stop, args))
    await asyncio.sleep(1.0)
    stop.set()
    baseline = await task
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(bystander(url, tool, stop, args, ready))
    await ready.wait()
    try:
        await load()
    finally:
        stop.set()
    loaded = await task
    for seen, when in ((baseline, "unloaded"), (loaded, "under load")):
        require(
            seen.ok == len(seen.latencies) >= MIN_BYSTANDER_CALLS,
            f"the bystander's calls {when}: {seen.ok} of {len(seen.latencies)} succeeded",
        )
    worst, p99 = stall(baseline.latencies, loaded.latencies)
    moment = split()
    after = None
    if moment is not None:
        pairs = zip(loaded.latencies, loaded.ends, strict=True)
        later = [lat for lat, end in pairs if end - lat > moment]
        after = stall(baseline.latencies, later)[0] if later else 0.0
    return Stall(worst, p99, len(loaded.latencies), after)


def stall_rows(what: str, seen: Stall) -> Figures:
    """The two lines every stall figure prints."""
    return [
        (
            f"bystander p99 added latency, {what}",
            judge(f"{seen.p99:.1f} ms", "< 100", seen.p99 < 100),
        ),
        (f"bystander max added latency, {what}", f"{seen.worst:.1f} ms ({seen.calls} calls)"),
    ]


def modern_call(name: str, arguments: Any, rid: Any = 1) -> tuple[dict[str, Any], dict[str, str]]:
    """A self-contained 2026-07-28 `/mcp` `tools/call`: its body and headers."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    return body, headers
