"""`mcpgym serve --debug`: environment tracebacks go back to the operator's requests.

Every exception an environment raises is logged with its traceback whatever the flag
(`mcpgym.runtime.crashes`). With `--debug` the structured error a request gets back also carries it
(`"traceback"`), but only when the request is the operator's: its bearer token is the operator
token, or the server has no tokens at all (a local server, its author's). A principal's request
(`--principals`) never gets one: the traceback can show another principal's data and the
server's code. Scope: HTTP routes and `/ws` (and stdio, which only its operator can reach); an
MCP session runs in tasks of its own that start outside any request, so `/mcp` errors carry no
traceback.

Example:
    >>> from mcpgym.servers.settings import ServerSettings
    >>> ExposeTracebacks(app=None, settings=ServerSettings(debug=True)).settings.debug
    True
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers

from mcpgym.runtime import crashes
from mcpgym.servers.guards.security import bearer_role
from mcpgym.servers.settings import ServerSettings

__all__ = ["ExposeTracebacks", "operator_request"]


def operator_request(headers: Headers, settings: ServerSettings) -> bool:
    """Whether a request with `headers` is the operator's (see the module docstring)."""
    found = bearer_role(headers, settings)
    if found is None:
        return False
    role = found[0]
    return role == "operator" or (role == "anonymous" and not settings.principals)


class ExposeTracebacks:
    """ASGI middleware: runs the operator's HTTP and WebSocket requests with tracebacks exposed."""

    def __init__(self, app: Any, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or not operator_request(
            Headers(scope=scope), self.settings
        ):
            await self.app(scope, receive, send)
            return
        token = crashes.expose_tracebacks(True)
        try:
            await self.app(scope, receive, send)
        finally:
            crashes.reset_exposure(token)
