"""Environments and clients for the security and reliability tests (tests/servers/test_security*.py,
the hostile-input suite and bench/reliability.py)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import httpx

from mcpgym import MCPEnvironment, tool

RELEASE = threading.Event()
"""Set to let every `hang` call return (tests set it at the end, so no thread outlives them)."""

CANCELLED: list[str] = []
"""`wait_forever` calls that were cancelled (a client disconnect must cancel the call)."""


class HangEnv(MCPEnvironment):
    """Sync tools that hang or misbehave, in the shared worker pool (`blocking = True`)."""

    @tool
    def hang(self, seconds: float = 30.0) -> str:
        """Block a worker thread until released (or `seconds` pass)."""
        RELEASE.wait(seconds)
        return "woke"

    @tool
    def ping(self) -> str:
        """Answer at once."""
        return "pong"

    @tool
    def weird(self, kind: str) -> Any:
        """Return something JSON cannot carry."""
        return object() if kind == "object" else {"raw": b"\xff\xfe"}

    @tool
    async def wait_forever(self, label: str) -> str:
        """Wait until cancelled."""
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            CANCELLED.append(label)
            raise
        return "never"


class InlineBusyEnv(MCPEnvironment):
    """`blocking = False` with a tool that breaks the promise (holds the loop)."""

    blocking = False

    @tool
    def busy(self, seconds: float) -> str:
        """Hold the thread it runs on for `seconds`."""
        time.sleep(seconds)
        return "done"

    @tool
    def ping(self) -> str:
        """Answer at once."""
        return "pong"


def mcp_initialize(client: httpx.Client, url: str, **headers: str) -> dict[str, str]:
    """Open a 2025-11-25 session on `/mcp`; returns the headers to use for its requests."""
    base = {"Accept": "application/json, text/event-stream", **headers}
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"},
        },
    }
    response = client.post(url, json=body, headers=base)
    response.raise_for_status()
    session = {**base, "Mcp-Session-Id": response.headers["mcp-session-id"]}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    client.post(url, json=note, headers=session)
    return session


def mcp_call(
    client: httpx.Client, url: str, headers: dict[str, str], name: str, args: dict[str, Any]
) -> dict[str, Any]:
    """One `tools/call` on an open session; the JSON-RPC response."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }
    response = client.post(url, json=body, headers=headers)
    text = response.text
    if text.startswith("event:") or "\ndata:" in text:  # an SSE stream: take the data line
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return json.loads(text)


class OwnCalls(MCPEnvironment):
    """Runs tools its own way (overrides `call_tool` and `call_tool_sync`, as Calendar Gym does):
    the framework's execution rules must still apply."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
    ) -> Any:
        return self.call_tool_sync(name, arguments)

    def call_tool_sync(self, name: str, arguments: dict[str, Any] | None) -> Any:
        spec = self.get_tool(name)
        return spec.dump_result(self.run_own(spec, spec.validate(arguments)))

    def run_own(self, spec: Any, kwargs: dict[str, Any]) -> Any:
        return getattr(self, spec.method)(**kwargs)


class OwnCallsEnv(OwnCalls, InlineBusyEnv):
    """`InlineBusyEnv` running its tools its own way."""


class BigEnv(MCPEnvironment):
    """Tools whose results are as large as asked: sync in the pool, async on the loop, and a
    class that runs tools its own way (as Calendar Gym does)."""

    @tool
    def blob(self, n: int) -> str:
        """`n` characters."""
        return "x" * n

    @tool
    def rows(self, n: int) -> list[dict[str, Any]]:
        """`n` small rows."""
        return [{"i": i, "s": "abcdefgh"} for i in range(n)]

    @tool
    async def ablob(self, n: int) -> str:
        """`n` characters, from an async tool."""
        return "y" * n

    @tool
    def ping(self) -> str:
        """Answer at once."""
        return "pong"


class BigOwnCallsEnv(OwnCalls, BigEnv):
    """`BigEnv` running its tools its own way, inline (its async tool made synchronous)."""

    blocking = False

    def run_own(self, spec: Any, kwargs: dict[str, Any]) -> Any:
        if spec.is_async:
            return "z" * int(kwargs.get("n", 0))
        return super().run_own(spec, kwargs)
