"""`ToolContext`: what a tool can do while it runs besides returning a value.

A tool receives one by declaring a parameter annotated `ToolContext` (any name). That parameter is
not part of the tool's input schema; the framework injects it on every call. A tool that takes a
context must be `async def`, since talking to the client is I/O.

- `await ctx.log(message, level="info")` — a log entry for the caller;
- `await ctx.progress(done, total, message)` — progress of a long call;
- `await ctx.sample(prompt)` — ask the client's model for a completion (MCP sampling);
- `await ctx.elicit(message, schema)` — ask the client's user for input (MCP elicitation).

Where they go depends on who called the tool. Over MCP (`/mcp`, stdio), logs and progress are
`notifications/message` and `notifications/progress` on the request's stream, and sampling and
elicitation are requests to the client, which must have declared the capability. In simulation
(`step`), logs and progress are recorded in `ctx.events` (the server puts them in the
observation's `metadata["tool_events"]`), and `sample` / `elicit` raise `ToolExecutionError`: a
trainer's episode has no user or client model to ask, so such a tool fails as data the agent sees.

Example:
    >>> from mcpgym import MCPEnvironment, tool
    >>> class Slow(MCPEnvironment):
    ...     @tool
    ...     async def crunch(self, n: int, ctx: ToolContext) -> int:
    ...         '''Crunch numbers, reporting progress.'''
    ...         for i in range(n):
    ...             await ctx.progress(i + 1, n)
    ...         await ctx.log("done")
    ...         return n
    >>> Slow.tool_specs["crunch"].input_schema["required"]
    ['n']
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Generator, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from mcpgym.errors import ToolExecutionError

__all__ = [
    "Elicitation",
    "LogLevel",
    "ToolContext",
    "current_context",
    "has_context",
    "recording",
    "use_context",
]

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: tuple[LogLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


class Elicitation(BaseModel):
    """The user's answer to `ToolContext.elicit`: `accept` (with `content`), `decline`, `cancel`."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class ToolContext:
    """Handed to a tool that asks for it; see the module docstring.

    This base class is the simulation context: it records `log` and `progress` calls in
    `events` and cannot sample or elicit. MCP transports hand tools a subclass bound to the
    request's MCP session.

    Attributes:
        events: what the tool logged and reported, in order (`{"event": "log" | "progress", ...}`).
        transport: `"simulation"` here; `"mcp"` for the MCP subclass.
    """

    transport: str = "simulation"

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    async def log(
        self, message: Any, level: LogLevel = "info", *, logger: str | None = None
    ) -> None:
        """Send a log entry (any JSON value) at `level` to the caller."""
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        event: dict[str, Any] = {"event": "log", "level": level, "data": message}
        if logger is not None:
            event["logger"] = logger
        self.events.append(event)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress (`progress` of `total`, e.g. 50 of 100)."""
        event: dict[str, Any] = {"event": "progress", "progress": progress}
        if total is not None:
            event["total"] = total
        if message is not None:
            event["message"] = message
        self.events.append(event)

    def supports(self, feature: Literal["sampling", "elicitation"]) -> bool:
        """Whether the caller can answer `sample` (`"sampling"`) or `elicit` (`"elicitation"`)."""
        return False

    async def sample(
        self,
        prompt: str,
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        key: str | None = None,
    ) -> str:
        """Ask the client's model to complete `prompt`; returns the reply's text.

        `key` names the question for 2026-07-28 clients, which answer by name (default: its
        position among the tool's questions).
        """
        raise ToolExecutionError(
            "this tool asks the client's model for a completion (MCP sampling), which only an MCP "
            "client connected over /mcp or stdio can answer; it is unavailable in simulation",
            feature="sampling",
        )

    async def elicit(
        self, message: str, schema: Mapping[str, Any] | type[BaseModel], *, key: str | None = None
    ) -> Elicitation:
        """Ask the client's user for input shaped by `schema` (a flat JSON Schema object, or a
        pydantic model whose fields are primitives); `key` as for `sample`."""
        raise ToolExecutionError(
            "this tool asks the user for input (MCP elicitation), which only an MCP client "
            "connected over /mcp or stdio can answer; it is unavailable in simulation",
            feature="elicitation",
        )


def elicitation_schema(schema: Mapping[str, Any] | type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema object an elicitation request carries."""
    if isinstance(schema, type):
        out = schema.model_json_schema()
        out.pop("title", None)
        return out
    return dict(schema)


_current: contextvars.ContextVar[ToolContext | None] = contextvars.ContextVar(
    "mcpgym_tool_context", default=None
)


def has_context() -> bool:
    """Whether a transport or caller has set the context for the tool calls being made."""
    return _current.get() is not None


def current_context() -> ToolContext:
    """The context of the tool call being made (a fresh recording context when none is set)."""
    ctx = _current.get()
    return ctx if ctx is not None else ToolContext()


@contextlib.contextmanager
def use_context(ctx: ToolContext) -> Generator[ToolContext]:
    """Make `ctx` the context tools called inside the block receive."""
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


def recording() -> contextlib.AbstractContextManager[ToolContext]:
    """A fresh simulation context for the tool calls inside the block (read its `events` after)."""
    return use_context(ToolContext())
