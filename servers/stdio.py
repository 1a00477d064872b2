"""`mcpgym serve MODULE:ATTR --stdio`: the production face over stdin/stdout.

stdout carries only MCP messages (the `mcp` package points fd 1 at stderr while serving, and we
log to stderr); the process exits when stdin closes. One long-lived environment instance,
reset at start-up, serves every request. A line that is not JSON gets the JSON-RPC parse error
(-32700) and one that is JSON but not a single message (a batch, say) gets -32600, as JSON-RPC
2.0 asks; the `mcp` package alone would drop them without a word.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.factory import make_factory
from mcpgym.servers.mcp_server import build_mcp_server

__all__ = ["serve_stdio"]

log = logging.getLogger("mcpgym.servers")


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
            async with stdio_server() as (read, write), anyio.create_task_group() as tg:
                send, screened = anyio.create_memory_object_stream[SessionMessage | Exception](0)
                tg.start_soon(_screen, read, write, send)
                await server.run(screened, write, server.create_initialization_options())
                tg.cancel_scope.cancel()
        finally:
            await env.aclose()

    anyio.run(run)
    return 0


async def _screen(read: Any, write: Any, forward: Any) -> None:
    """Forward well-formed messages to the server; answer unreadable lines with an error."""
    async with forward:
        async for item in read:
            if not isinstance(item, Exception):
                await forward.send(item)
                continue
            parse = isinstance(item, ValidationError) and any(
                e["type"] == "json_invalid" for e in item.errors(include_url=False)
            )
            error = (
                ErrorData(code=PARSE_ERROR, message="Parse error: the line is not valid JSON")
                if parse
                else ErrorData(
                    code=INVALID_REQUEST,
                    message="Invalid Request: a line must hold one JSON-RPC message (no batches)",
                )
            )
            log.warning("stdio: %s", error.message)
            await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error)))
