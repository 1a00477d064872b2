"""`PythonAdapter`: a harness that is an async Python callable, reaching the tools over real MCP.

The callable gets each user message and a `PythonHarnessContext`; it calls the environment's
tools with `ctx.call_tool` (a real MCP client on the episode's server, so the path is the same as
for a CLI), may `ctx.emit` its own events, and returns the turn's response — a string, or a
`TurnComplete` to also say `done`.

Example::

    async def agent(message: str, ctx: PythonHarnessContext) -> str:
        out = await ctx.call_tool("guess", {"n": 50})
        return f"50 is {out.structured['verdict']}"

    adapter = PythonAdapter(agent)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import BaseModel

from mcpgym.harness.adapters.base import (
    AgenticHarnessAdapter,
    HarnessCapabilities,
    HarnessError,
    McpServer,
    ModelEndpoint,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnComplete,
)

__all__ = ["PythonAdapter", "PythonAgent", "PythonHarnessContext", "ToolOutput"]


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's answer: its text, its structured content (when typed) and whether it failed."""

    text: str
    structured: Any = None
    is_error: bool = False


@dataclass
class PythonHarnessContext:
    """What a Python harness sees: the model endpoint, the turn number, a free `memory` dict kept
    for the episode, and the environment's tools over MCP."""

    model: ModelEndpoint | None
    turn: int = 0
    memory: dict[str, Any] = field(default_factory=dict[str, Any])
    _client: Any = None
    _emit: Callable[[BaseModel], None] | None = None
    _ids: int = 0

    def emit(self, event: BaseModel) -> None:
        """Add an event (e.g. `TextEvent`) to the current turn."""
        if self._emit is not None:
            self._emit(event)

    async def list_tools(self) -> list[str]:
        """The names of the tools the environment offers."""
        result = await self._client.list_tools()
        return [t.name for t in result.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> ToolOutput:
        """Call a tool over MCP (emitting `tool_call` and `tool_result` events)."""
        self._ids += 1
        call_id = f"py_{self.turn}_{self._ids}"
        self.emit(ToolCallEvent(id=call_id, name=name, arguments=arguments or {}))
        result = await self._client.call_tool(name, arguments or {})
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        out = ToolOutput(text, result.structured_content, bool(result.is_error))
        content = out.structured if out.structured is not None else text
        self.emit(ToolResultEvent(id=call_id, name=name, content=content, is_error=out.is_error))
        return out


PythonAgent = Callable[[str, PythonHarnessContext], Awaitable[str | TurnComplete | None]]
"""`async def agent(message, ctx) -> response` (a string, a `TurnComplete`, or `None`)."""


class PythonAdapter(AgenticHarnessAdapter):
    """Run an async callable as the harness (see the module docstring)."""

    name = "python"
    capabilities = HarnessCapabilities(
        process="in_process", dialect=None, tool_naming="{tool}", resume=True, transports=("http",)
    )

    def __init__(self, agent: PythonAgent) -> None:
        super().__init__()
        self.agent = agent
        self._ctx: PythonHarnessContext | None = None
        self._session: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None

    async def _start(self, mcp: McpServer, model: ModelEndpoint | None) -> None:
        if mcp.url is None:
            raise HarnessError("the python harness reaches the tools over HTTP; give it a URL")
        ctx = self._ctx = PythonHarnessContext(model=model)
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        # The MCP client's task group must be entered and left by one task: this one owns it.
        self._session = asyncio.create_task(self._hold(mcp, ctx, ready, self._closing))
        await asyncio.wait([ready, self._session], return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            raise HarnessError(f"python harness: cannot connect to {mcp.url}")

    @staticmethod
    async def _hold(
        mcp: McpServer,
        ctx: PythonHarnessContext,
        ready: asyncio.Future[None],
        closing: asyncio.Event,
    ) -> None:
        http = create_mcp_http_client(headers=dict(mcp.headers))
        assert mcp.url is not None
        async with http, Client(streamable_http_client(mcp.url, http_client=http)) as client:
            ctx._client = client
            ready.set_result(None)
            await closing.wait()

    async def _turn(self, message: str) -> AsyncGenerator[Any, None]:
        ctx = self._ctx
        assert ctx is not None
        ctx.turn += 1
        ctx._emit = self.publish  # events go straight into the turn's stream, in order
        try:
            answer = await self.agent(message, ctx)
        finally:
            ctx._emit = None
        if isinstance(answer, TurnComplete):
            if answer.response:
                yield TextEvent(text=answer.response)
            yield answer
            return
        text = "" if answer is None else answer if isinstance(answer, str) else json.dumps(answer)
        if text:
            yield TextEvent(text=text)
        yield TurnComplete(response=text)

    def _alive(self) -> bool:
        return self._session is not None and not self._session.done()

    async def _stop(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._session is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._session, 10.0)
        self._session = self._closing = self._ctx = None
