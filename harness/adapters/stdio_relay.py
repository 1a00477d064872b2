"""Relay MCP between stdio and an episode's Streamable HTTP server.

    python -m mcpgym.harness.adapters.stdio_relay URL      # bearer token in MCPGYM_RELAY_TOKEN

A harness configured with a stdio MCP server runs this command; the messages pass unchanged
(the official `mcp` transports frame them on both sides), so the environment instance stays in
the `HarnessEnvironment` process, where its call log and rewards are kept. Exits when stdin
closes or the server goes away.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client

__all__ = ["main", "relay"]


async def _pipe(source: Any, sink: Any, done: anyio.Event) -> None:
    try:
        async for message in source:
            if isinstance(message, Exception):  # a transport error, not a message: drop it
                continue
            await sink.send(message)
    finally:
        done.set()


async def relay(url: str, token: str | None) -> None:
    """Forward messages both ways until either side ends."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as client,
        stdio_server() as (local_read, local_write),
        streamable_http_client(url, http_client=client) as (remote_read, remote_write),
        anyio.create_task_group() as tg,
    ):
        done = anyio.Event()
        tg.start_soon(_pipe, local_read, remote_write, done)
        tg.start_soon(_pipe, remote_read, local_write, done)
        await done.wait()
        tg.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m mcpgym.harness.adapters.stdio_relay URL", file=sys.stderr)
        return 2
    anyio.run(relay, args[0], os.environ.get("MCPGYM_RELAY_TOKEN"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
