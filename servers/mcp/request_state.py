"""The 2026-07-28 `requestState` middleware of mcpgym's MCP server, and when it is needed.

A tool that takes a `ToolContext` may ask the client a question mid-call (sampling, elicitation):
on 2026-07-28 the call then ends with an `input_required` result whose `requestState` carries the
earlier answers, sealed by the `mcp` package's `RequestStateBoundary` (AES-GCM under a key of this
process), and the client calls again with it. Only such tools ever mint a state.

The boundary's module imports `cryptography` at import time (about 9 MB of resident memory, most
of it its Rust extension), which a server none of whose tools can ask the client would carry for
nothing. `request_state_middleware` therefore installs the real boundary up front only when a
tool can ask (or when the tools are not known before the server runs); otherwise it installs
`NoStateBoundary`, which passes calls through and hands any call that *brings* a `requestState`
to the real boundary, built on that first call, so that a state this server never minted is
refused exactly as before (-32602 "Invalid or expired requestState").
"""

from __future__ import annotations

# First: `mcp` then loads without its client side (servers/mcp/lean.py).
from mcpgym.servers.mcp import lean as mcp_lean  # noqa: F401  # pyright: ignore[reportUnusedImport]

# isort: split

from typing import TYPE_CHECKING, Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR
from mcp_types.methods import INPUT_REQUIRED_METHODS, is_input_required

if TYPE_CHECKING:
    from mcp.server.request_state import RequestStateBoundary

__all__ = ["NoStateBoundary", "request_state_middleware"]


def _boundary(name: str) -> RequestStateBoundary:
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    return RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=name)


class NoStateBoundary:
    """Middleware for a server that never asks the client: no `requestState` is ever minted."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._real: RequestStateBoundary | None = None

    def loaded(self) -> bool:
        """Whether the real boundary (and `cryptography`) has been built."""
        return self._real is not None

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method not in INPUT_REQUIRED_METHODS:
            return await call_next(ctx)
        if ctx.params is not None and ctx.params.get("requestState") is not None:
            if self._real is None:  # a state we never minted: the boundary refuses it
                self._real = _boundary(self._name)
            return await self._real(ctx, call_next)
        result = await call_next(ctx)
        if is_input_required(result):  # cannot happen (no tool asks); never send a state unsealed
            raise MCPError(code=INTERNAL_ERROR, message="Internal error")
        return result


def request_state_middleware(name: str, *, asks_client: bool) -> ServerMiddleware[Any]:
    """The `requestState` middleware for a server named `name` (the state's audience).

    `asks_client`: whether any tool may ask the client mid-call (takes a `ToolContext`), or the
    tools are not known up front.
    """
    return _boundary(name) if asks_client else NoStateBoundary(name)
