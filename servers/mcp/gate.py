"""What `/mcp` checks in a request before anything acts on it (servers/mcp/routes.py calls it).

- **The body, read once and parsed strictly** (servers/wire_json.py), whichever dialect it is:
  `NaN`, `1e999` and nesting deeper than `wire_json.MAX_DEPTH` are a JSON-RPC parse error
  (400, -32700), a batch or an `id` that is neither a string, an integer nor null an invalid
  request (400, -32600), before the `mcp` package or OpenEnv's dialect sees it. The `mcp`
  package's own parser accepts `NaN` and turns `1e999` into infinity; an argument like that
  once reached a tool, was stored in an episode's record and made every later read of it fail.
- **A session is used only by whoever opened it**: a request carrying an `Mcp-Session-Id`
  with another credential (another principal's token, or an episode URL for a session it did
  not open) is answered as for an unknown session (404), so an episode id cannot end, read or
  drive another client's session.
- **A principal's quota**: an `initialize` from a principal holding `principal_quota` sessions
  already is refused with 429 (`QUOTA_REACHED`, `Retry-After`), so one principal cannot take
  every session of the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from mcpgym.servers import wire_json

__all__ = [
    "Body",
    "bad_id",
    "owner_key",
    "read_body",
    "rpc_refusal",
]


class Body:
    """A request body read in full (up to a limit), and a `receive` that replays it."""

    def __init__(self, messages: Sequence[Message], over: bool, receive: Receive) -> None:
        self._messages = list(messages)
        self.over = over
        self.raw = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        self._receive = receive

    def parse(self) -> Any:
        """The strictly parsed body (`None` when over the limit or empty); `InvalidJSON`."""
        if self.over or not self.raw.strip():
            return None
        return wire_json.loads(self.raw, "the request")

    def replay(self) -> Receive:
        """A `receive` giving the messages read, then the rest of the request."""
        pending = list(self._messages)

        async def receive() -> Message:
            if pending:
                return pending.pop(0)
            return await self._receive()

        return receive


async def read_body(receive: Receive, limit: int) -> Body:
    """Read the request body, stopping once it passes `limit` bytes (the rest stays unread)."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit or not message.get("more_body", False):
            break
    return Body(messages, size > limit, receive)


def bad_id(message: Any) -> bool:
    """Whether a JSON-RPC message's `id` is of a type JSON-RPC does not allow."""
    if not isinstance(message, dict) or "id" not in message:
        return False
    rid: Any = message["id"]  # pyright: ignore[reportUnknownVariableType]
    return rid is not None and (isinstance(rid, bool) or not isinstance(rid, str | int))


def owner_key(role: str, token: str, episode: str | None) -> str:
    """The credential a session belongs to: the episode, the principal's token, or the role."""
    if episode is not None:
        return f"episode:{episode}"
    if role == "principal":
        return f"principal:{token}"
    return role


async def rpc_refusal(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    code: int,
    message: str,
    headers: dict[str, str] | None = None,
) -> None:
    """Answer with a JSON-RPC error object (`id` null) and `status`."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    await JSONResponse(body, status_code=status, headers=headers)(scope, receive, send)
