"""bench/run.py measurements that drive both servers with `_load.py` workers: ws1, ws100, http,
mcp1, mcp50 (the frames and request bodies every client sends live here too)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from calls._bench import Bench, measurement
from calls._issue_table import Line as _Line
from calls._servers import Server
from calls._table import Row, _fmt

TARGET_WS1 = 0.6  # issue 2: single-session WS steps/s at least 60 % of the floor
TARGET_CPU1 = 2.0  # issue 17: server CPU per single-session WS step at most 2x the floor's

# The frames every WS client sends, byte for byte the same to both servers. `n=50` never ends an
# episode unless the secret is 50; a reply with done=true makes the worker reset (uncounted).
RESET_FRAME = json.dumps({"type": "reset", "data": {"seed": 7}})
STEP_FRAME = json.dumps(
    {"type": "step", "data": {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 50}}}
)
# HTTP /step is stateless in mcpgym (fresh instance per request: reset + step).
HTTP_STEP_BODY = json.dumps(
    {
        "action": {"type": "call_tool", "tool_name": "guess", "arguments": {"n": 50}},
        "reset": {"seed": 7},
    }
)
# `/mcp` tools/call params (production mode: one long-lived GuessEnv serves every session).
MCP_CALL = {"name": "guess", "arguments": {"n": 50}}


def _ws_spec(conns: int) -> Callable[[Server], dict[str, Any]]:
    return lambda srv: {
        "kind": "ws",
        "url": srv.url("/ws", "ws"),
        "conns": conns,
        "reset_frame": RESET_FRAME,
        "step_frame": STEP_FRAME,
        # No permessage-deflate: measure the framework, not zlib (see the closing notes).
        "compression": None,
    }


@measurement("ws1", "single-session WS tool-call steps")
async def ws1(b: Bench) -> list[Row]:
    # One connection, one client process: a strict request/response ping-pong, so the rate is
    # 1 / (client + loopback + server) time; the server CPU per step isolates the server's share.
    # The headline figure gets two extra rounds.
    c = await b.compare(
        _ws_spec(1), procs=1, rounds=b.cfg.rounds + (0 if b.cfg.quick else 2), legacy=True
    )
    m, f = c.best("mcpgym"), c.best("floor")
    return [
        Row(
            "ws1",
            "WS steps/s, 1 session",
            "steps/s",
            m.rate,
            f.rate,
            target=TARGET_WS1,
            floor2=c.legacy(),
        ),
        Row(
            "ws1_p50",
            "WS round trip p50, 1 session",
            "µs",
            m.p50_us,
            f.p50_us,
            False,
            note=f"p99 {_fmt(m.p99_us, 'µs')} / {_fmt(f.p99_us, 'µs')} µs",
        ),
        Row(
            "cpu_per_step",
            "server CPU per WS step, 1 session",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
            target=TARGET_CPU1,
            note=c.util() + " of a core",
            floor2=c.legacy("cpu"),
        ),
    ]


@measurement("ws100", "100-session aggregate WS steps")
async def ws100(b: Bench) -> list[Row]:
    # Why 2 client processes: one asyncio process driving 100 connections with `websockets`
    # spends about as much CPU per round trip (~120 µs here) as the floor server does, so with
    # one client process the floor figure is the client's limit, not the floor's (measured: 1 proc
    # floor 1.7k steps/s, 2 procs 3.0k; mcpgym unchanged). Two processes x 50 connections give
    # both servers the same, less limiting client; the note shows how busy each server was.
    n = b.cfg.agg_conns
    c = await b.compare(_ws_spec(n), procs=b.cfg.agg_procs)
    return [
        Row(
            "ws100",
            f"WS steps/s, {n} sessions (aggregate)",
            "steps/s",
            c.rate("mcpgym"),
            c.rate("floor"),
            note=f"{c.saturation()}; {b.cfg.agg_procs} client procs",
        ),
        Row(
            "ws100_cpu",
            f"server CPU per WS step, {n} sessions",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
        ),
    ]


@measurement("http", "HTTP POST /step requests")
async def http(b: Bench) -> list[Row]:
    # httpx spends more client CPU per request (~1.5 ms here) than either server, so this rate is
    # client-bound (see the server-busy note) and 2 client processes share the load, as in ws100.
    # The server CPU per request is the figure that compares the servers.
    def spec(srv: Server) -> dict[str, Any]:
        return {
            "kind": "http",
            "url": srv.url("/step"),
            "conns": b.cfg.http_conns,
            "body": HTTP_STEP_BODY,
        }

    c = await b.compare(spec, procs=b.cfg.http_procs)
    return [
        Row(
            "http",
            f"HTTP /step req/s ({b.cfg.http_conns} concurrent)",
            "req/s",
            c.rate("mcpgym"),
            c.rate("floor"),
            note=c.saturation(),
        ),
        Row(
            "http_cpu",
            "server CPU per HTTP /step",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
            note="mcpgym: fresh env, reset + step per request",
        ),
    ]


def _mcp_spec(conns: int) -> Callable[[Server], dict[str, Any]]:
    return lambda srv: {"kind": "mcp", "url": srv.url("/mcp"), "conns": conns, "call": MCP_CALL}


_MCP_NOTE = "mcpgym --mode production; JSON responses, 2025-11-25 sessions, raw HTTP/1.1"


def _mcp_rounds(b: Bench) -> int:
    # mcpgym's /mcp is several times the floor's cost, far above the round-to-round noise:
    # two rounds (one in each order) keep `just bench` within its two minutes.
    return min(b.cfg.rounds, 2)


@measurement("mcp1", "/mcp tools/call, 1 client")
async def mcp1(b: Bench) -> list[Row]:
    # As ws1: a strict request/response ping-pong on one keep-alive connection and session.
    c = await b.compare(_mcp_spec(1), procs=1, rounds=_mcp_rounds(b), mcpgym="mcpgym-production")
    m, f = c.best("mcpgym"), c.best("floor")
    return [
        Row("mcp1", "/mcp tools/call/s, 1 client", "calls/s", m.rate, f.rate, note=_MCP_NOTE),
        Row(
            "mcp1_p50",
            "/mcp call round trip p50, 1 client",
            "µs",
            m.p50_us,
            f.p50_us,
            False,
            note=f"p99 {_fmt(m.p99_us, 'µs')} / {_fmt(f.p99_us, 'µs')} µs",
        ),
        Row(
            "mcp1_cpu",
            "server CPU per /mcp call, 1 client",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
            note=c.util() + " of a core",
        ),
    ]


@measurement("mcp50", "/mcp tools/call, 50 concurrent clients")
async def mcp50(b: Bench) -> list[Row]:
    # Two client processes, as in ws100, so that the client is not the floor's limit.
    n = b.cfg.mcp_conns
    c = await b.compare(
        _mcp_spec(n), procs=b.cfg.mcp_procs, rounds=_mcp_rounds(b), mcpgym="mcpgym-production"
    )
    return [
        Row(
            "mcp50",
            f"/mcp tools/call/s, {n} clients",
            "calls/s",
            c.rate("mcpgym"),
            c.rate("floor"),
            note=f"aggregate; {c.saturation()}; {b.cfg.mcp_procs} client procs",
        ),
        Row(
            "mcp50_cpu",
            f"server CPU per /mcp call, {n} clients",
            "µs",
            c.cpu_us("mcpgym"),
            c.cpu_us("floor"),
            False,
        ),
    ]


# bench/calls/_issue_table.py: this module's lines of issue 17's table
ISSUE_TABLE = [
    _Line("WS call_tool step, server CPU", ("cpu_per_step",), f"≤ {TARGET_CPU1}x"),
]
