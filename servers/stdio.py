"""`mcpgym serve MODULE:ATTR --stdio`: the production face over stdin/stdout.

stdout carries only MCP messages (the `mcp` package points fd 1 at stderr while serving, and we
log to stderr); the process exits when stdin closes.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from mcpgym.mcp_env import MCPEnvironment

from mcpgym.servers.factory import make_factory
from mcpgym.servers.mcp_server import build_mcp_server

__all__ = ["serve_stdio"]


def serve_stdio(target: Any, reset_options: dict[str, Any] | None = None) -> int:
    """Serve `target`'s production tools over stdio until stdin closes; returns an exit code."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, force=True)
    factory, _ = make_factory(target, "production")
    env = factory()
    if not isinstance(env, MCPEnvironment):
        print(f"mcpgym: {type(env).__name__} has no tools to serve over MCP", file=sys.stderr)
        return 2

    async def run() -> None:
        await env.areset(**(reset_options or {}))

        async def service() -> MCPEnvironment:
            return env

        meta = env.metadata()
        server = build_mcp_server(
            name=meta.name,
            version=meta.version,
            instructions=meta.description or None,
            tool_specs=lambda: env.tool_specs,
            mode="production",
            sessions=None,
            default_env=service,
        )
        try:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        finally:
            await env.aclose()

    anyio.run(run)
    return 0
