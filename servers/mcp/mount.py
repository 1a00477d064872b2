"""`McpMount`: the app's MCP face (`/mcp` and the WebSocket `mcp` frame), built on first use.

Importing the `mcp` package costs well over a second and tens of megabytes, most of which a
simulation server never needs: trainers step through `/ws`. So the MCP `Server`, its Streamable
HTTP session manager and the manager's task group come to life on the first `/mcp` request or
`mcp` frame (in production, at start-up, since MCP is all that server does). Only then is `mcp`
imported, and in a worker thread (`_build`): executed on the event loop, that second of module
code stalled every other session, `/ws` and `/health` included, on the first `/mcp` request.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.types import Receive, Scope, Send

from mcpgym.errors import SessionError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.guards.principals import ProductionEnvs
from mcpgym.servers.mcp.session_count import SessionCount
from mcpgym.servers.sessions import Session, SessionManager
from mcpgym.servers.settings import ServerSettings

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from mcpgym.servers.mcp.routes import McpEndpoint

__all__ = ["McpMount"]


class McpMount:
    """Builds and runs the MCP server for one app, once, when first needed."""

    def __init__(
        self,
        *,
        settings: ServerSettings,
        sessions: SessionManager,
        production: ProductionEnvs | None,
        env_cls: type | None,
        tool_specs: Callable[[], dict[str, Any]],
    ) -> None:
        self._settings = settings
        self._sessions = sessions
        self._production = production
        self._env_cls = env_cls
        self._tool_specs = tool_specs
        self._server: Server[Any] | None = None
        self._endpoint: McpEndpoint | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._build_lock = asyncio.Lock()
        self._count = SessionCount(settings)

    def server(self) -> Server[Any]:
        """The low-level MCP `Server` (built, not yet serving HTTP)."""
        if self._server is None:
            from mcpgym.servers.mcp.server import build_mcp_server

            cls = self._env_cls
            self._server = build_mcp_server(
                name=cls.__name__ if cls is not None else "mcpgym",
                version=str(getattr(cls, "version", "0.0.0")),
                instructions=str(getattr(cls, "description", "")) or None,
                tool_specs=self._tool_specs,
                mode=self._settings.mode,
                sessions=self._sessions,
                default_env=None,
                timeout_s=self._settings.step_timeout_s,
                asks_client=not self.json_response,  # SSE exactly when a tool may ask the client
                max_result_bytes=self._settings.max_result_bytes,
            )
        return self._server

    @property
    def json_response(self) -> bool:
        """Whether `/mcp` answers with plain JSON (no tool needs an SSE back channel)."""
        from mcpgym.servers.mcp.routes import json_responses

        return json_responses(getattr(self._env_cls, "tool_specs", None))

    async def _build(self) -> Server[Any]:
        """The MCP `Server`, imported and built in a worker thread the first time (the lock
        held: one build; the import runs module code for over a second, off the loop)."""
        if self._server is not None:
            return self._server
        async with self._build_lock:
            if self._server is None:
                await asyncio.to_thread(self._import_and_build)
        assert self._server is not None
        return self._server

    def _import_and_build(self) -> None:
        # hundreds of thousands of new objects would set off collections that hold the GIL
        # (every thread's) for their length: the import's objects live for good anyway
        enabled = gc.isenabled()
        gc.disable()
        try:
            from mcpgym.servers.mcp import direct, routes  # noqa: F401  # pyright: ignore[reportUnusedImport]

            self.server()
        finally:
            if enabled:
                gc.enable()

    async def start(self) -> McpEndpoint:
        """Build the session manager and run it in its own task (idempotent)."""
        if self._endpoint is not None:
            return self._endpoint
        async with self._lock:
            if self._endpoint is None:
                await self._build()
                from mcpgym.servers.mcp.routes import McpEndpoint, build_session_manager

                specs = getattr(self._env_cls, "tool_specs", None)
                manager = build_session_manager(self.server(), self._settings, specs)
                ready = asyncio.Event()

                async def run() -> None:
                    # The manager's task group must be entered and left in one task.
                    async with manager.run():
                        ready.set()
                        await self._stop.wait()

                self._runner = asyncio.create_task(run(), name="mcpgym-mcp-manager")
                waiter = asyncio.create_task(ready.wait())
                await asyncio.wait([waiter, self._runner], return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if self._runner.done():  # the manager failed to start: surface why
                    self._runner.result()
                self._endpoint = McpEndpoint(manager, self._settings, self._production, self._count)
        assert self._endpoint is not None
        return self._endpoint

    async def stop(self) -> None:
        """Stop the session manager (closes open MCP sessions and their environments)."""
        self._stop.set()
        if self._runner is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._runner, timeout=10)
            self._runner = None
        self._count.clear()

    def open_sessions(self) -> int:
        """Stateful `/mcp` sessions open now (0 before the first MCP request)."""
        return len(self._count)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The `/mcp` ASGI endpoint."""
        endpoint = await self.start()
        await endpoint(scope, receive, send)

    async def ws_frame(self, session: Session, request: dict[str, Any]) -> dict[str, Any] | None:
        """Answer a WebSocket `{"type":"mcp"}` frame with the session's own environment."""
        env = session.env
        if not isinstance(env, MCPEnvironment):
            raise SessionError("this environment has no tools to serve over MCP")
        if not session.started:
            raise SessionError("No episode: send reset before mcp requests.")
        server = await self._build()
        from mcpgym.servers.mcp.direct import answer_jsonrpc

        return await answer_jsonrpc(server, env, request)
