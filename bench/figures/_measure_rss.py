"""The `rss` measurement: idle memory of `mcpgym serve --mode production` (issue 17: ≤ 60 MB).

Fresh servers of the guess example, alternating with two references, median of a few starts:
- production at idle (after the first 200 from /health; `/mcp` is ready by then) and again
  after a first `/mcp` session and tools/call (a first call must not pay a large import);
- the same server with the whole `mcp` package imported first (what it cost before
  servers/mcp/lean.py and servers/mcp/request_state.py: client side, MCPServer, cryptography);
- simulation mode (imports no `mcp` until `/mcp` is used).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, when run as a script

from calls._bench import Bench, measurement
from calls._issue_table import Line as _Line
from calls._servers import HOST, Server, server_command
from calls._table import Row

LIMIT_RSS_MB = 60.0  # issue 17: production idle RSS

# bench/calls/_issue_table.py: this module's line of issue 17's table
ISSUE_TABLE = [_Line("production idle RSS", ("rss_idle_prod_mb",), f"≤ {LIMIT_RSS_MB:g} MB")]

# `mcpgym serve` with `mcp` (and through it the client side and cryptography) imported first.
_FULL_MCP = (
    "import runpy, sys; import mcp, mcp.server, mcp.server.request_state; "
    "sys.argv = ['mcpgym', *sys.argv[1:]]; runpy.run_module('mcpgym.servers', run_name='__main__')"
)
_ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _full_mcp_command() -> list[str]:
    serve = server_command("mcpgym-production", 0)
    args = serve[serve.index("serve") :]
    args[args.index("--port") + 1] = "{port}"
    return [sys.executable, "-c", _FULL_MCP, *args]


async def _first_call(url: str) -> None:
    """One 2025-11-25 session: initialize, initialized, tools/call guess."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench-rss", "version": "1"},
        },
    }
    async with httpx.AsyncClient(timeout=15.0) as http:
        r = await http.post(url, json=init, headers=_ACCEPT)
        r.raise_for_status()
        sid = {"Mcp-Session-Id": r.headers["mcp-session-id"]}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        (await http.post(url, json=note, headers={**_ACCEPT, **sid})).raise_for_status()
        call = {"name": "guess", "arguments": {"n": 50}}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
        r = await http.post(url, json=body, headers={**_ACCEPT, **sid})
        r.raise_for_status()
        if '"isError":false' not in r.text.replace(" ", ""):
            raise RuntimeError(f"tools/call guess failed: {r.text[:300]}")


@measurement("rss", "production idle RSS, after a first /mcp call, and its references")
async def rss(b: Bench) -> list[Row]:
    runs = 1 if b.cfg.quick else 3
    got: dict[str, list[float]] = {"idle": [], "called": [], "full": [], "sim": []}
    for _ in range(runs):
        for kind in ("idle", "full", "sim"):
            if kind == "full":
                srv = Server("mcpgym-production+mcp", _full_mcp_command())
            else:
                srv = Server("mcpgym" if kind == "sim" else "mcpgym-production")
            try:
                await asyncio.to_thread(srv.start)
                await asyncio.sleep(0.3)  # let start-up settle before reading the idle RSS
                got[kind].append(srv.rss_mb())
                if kind == "idle":
                    await _first_call(f"http://{HOST}:{srv.port}/mcp")
                    got["called"].append(srv.rss_mb())
            finally:
                srv.stop()
    med = {k: statistics.median(v) for k, v in got.items()}
    n = f"median of {runs} fresh server{'s' if runs > 1 else ''}"
    return [
        Row(
            "rss_idle_prod_mb",
            "production idle RSS (guess)",
            "MB",
            med["idle"],
            None,
            False,
            limit=LIMIT_RSS_MB,
            note=f"{n}; /mcp ready at /health; {med['full']:.1f} MB with all of `mcp` imported",
        ),
        Row(
            "rss_after_call_prod_mb",
            "production RSS after a first /mcp call",
            "MB",
            med["called"],
            None,
            False,
            note=f"{med['called'] - med['idle']:+.1f} MB over idle (session, call; no import)",
        ),
        Row(
            "rss_idle_sim_mb",
            "simulation idle RSS (guess)",
            "MB",
            med["sim"],
            None,
            False,
            note="no `mcp` until /mcp is used",
        ),
    ]
