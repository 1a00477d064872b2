"""The `mcp` package is imported on first use, and never on the event loop (issue 26): run on
the loop, its second of module code (and the collections its objects set off) stalled every
session on the first `/mcp` request. Each way in — spec `/mcp` over HTTP, a `/ws` `mcp` frame —
in a fresh interpreter where nothing imported `mcp` yet."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.server
ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import importlib.abc, json, sys, threading, time
    import httpx, uvicorn
    from websockets.sync.client import connect
    from mcpgym.examples.guess import GuessEnv
    from mcpgym.servers import create_app

    assert "mcp" not in sys.modules, "imported before the first MCP request"
    seen = []

    class Watch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "mcp":
                seen.append(threading.current_thread().name)
            return None

    sys.meta_path.insert(0, Watch())
    app = create_app(GuessEnv)
    server = uvicorn.Server(uvicorn.Config(app, port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="event-loop", daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    if sys.argv[1] == "http":
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}
        r = httpx.post(f"http://127.0.0.1:{port}/mcp", json=init, timeout=60,
                       headers={"Accept": "application/json, text/event-stream"})
        ok = r.status_code == 200 and "result" in r.json()
    else:
        with connect(f"ws://127.0.0.1:{port}/ws") as ws:
            ws.send(json.dumps({"type": "reset"}))
            ws.recv(timeout=60)
            ws.send(json.dumps({"type": "mcp", "data": listing}))
            ok = bool(json.loads(ws.recv(timeout=60))["data"]["result"]["tools"])
    server.should_exit = True
    thread.join(10)
    print(json.dumps({"ok": ok, "importers": seen}))
    """
)


@pytest.mark.parametrize("way", ["http", "ws"])
def test_the_first_mcp_request_imports_mcp_off_the_event_loop(way: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, way],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["ok"], seen
    assert seen["importers"], "the MCP request never imported mcp"
    assert "event-loop" not in seen["importers"], seen["importers"]
