"""`SessionCount`: how many stateful `/mcp` sessions are open, read from the HTTP traffic itself.

`/health` reports open sessions. The `mcp` package keeps its sessions in a private dict, and on
2.0/2.1 a session the client ended with DELETE stays there until its server task winds down at
the idle timeout, so counting that dict over-counts. The Streamable HTTP exchange says all we
need, on every `mcp` release: a session is born when a request without `Mcp-Session-Id` is
answered with one (2xx), it ends when a DELETE carrying its id succeeds or a request carrying it
is answered 404 (the manager no longer knows it), and otherwise it lives until it has had no
request in flight for the idle timeout (the manager's `session_idle_timeout` reaps it then).

Each session also keeps the credential that opened it (`owner`: a principal's token, the
operator, or the episode an `/mcp?episode=` URL names): a request carrying its id with another
credential is refused (servers/mcp/gate.py), and `owned` counts a principal's sessions for its
quota.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcpgym.servers.settings import ServerSettings

__all__ = ["SessionCount"]

_SESSION_HEADER = "mcp-session-id"


@dataclass(slots=True)
class _Seen:
    in_flight: int = 0
    last_active: float = 0.0
    owner: str = ""


class SessionCount:
    """Open stateful MCP sessions, tracked around the `/mcp` endpoint (see the module docstring)."""

    def __init__(self, settings: ServerSettings) -> None:
        self._idle_s = settings.idle_timeout_s
        self._open: dict[str, _Seen] = {}

    def __len__(self) -> int:
        self._drop_idle()
        return len(self._open)

    def clear(self) -> None:
        """Forget every session (the session manager stopped: they all ended)."""
        self._open.clear()

    def owner_of(self, sid: str) -> str | None:
        """The credential that opened session `sid`, `None` when it is not known here."""
        seen = self._open.get(sid)
        return None if seen is None else seen.owner

    def owned(self, owner: str) -> int:
        """How many open sessions `owner` opened."""
        self._drop_idle()
        return sum(1 for seen in self._open.values() if seen.owner == owner)

    async def serve(
        self, endpoint: ASGIApp, scope: Scope, receive: Receive, send: Send, owner: str = ""
    ) -> None:
        """Run `endpoint` on one request (made with credential `owner`), noting the sessions
        its answer opens or ends."""
        if scope["type"] != "http":
            await endpoint(scope, receive, send)
            return
        sid = Headers(scope=scope).get(_SESSION_HEADER)
        seen = self._open.get(sid) if sid else None
        if seen is not None:
            seen.in_flight += 1

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                self._answered(scope["method"], sid, message, owner)
            await send(message)

        try:
            await endpoint(scope, receive, noting)
        finally:
            if seen is not None:
                seen.in_flight -= 1
                seen.last_active = time.monotonic()

    def _answered(self, method: str, sid: str | None, start: Message, owner: str) -> None:
        status: int = start["status"]
        if sid is None:
            born = Headers(raw=start.get("headers", [])).get(_SESSION_HEADER)
            if born and 200 <= status < 300 and born not in self._open:
                self._drop_idle()
                self._open[born] = _Seen(last_active=time.monotonic(), owner=owner)
        elif status == 404 or (method == "DELETE" and 200 <= status < 300):
            self._open.pop(sid, None)

    def _drop_idle(self) -> None:
        deadline = time.monotonic() - self._idle_s
        for sid, seen in list(self._open.items()):
            if seen.in_flight == 0 and seen.last_active < deadline:
                del self._open[sid]
