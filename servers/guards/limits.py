"""Wire limits that must hold before the application sees a request, on both HTTP parsers.

uvicorn bounds a request head only with h11 (16 KiB by default) and not at all with httptools,
the parser `uvicorn[standard]` installs: a 128 MiB header was once buffered in full. The protocol
classes here bound the head (request line + headers) to `max_header_bytes` on either parser and
answer with 431 and a JSON body; malformed requests get a JSON 400 instead of uvicorn's text.
The header *count* is checked by `HeaderCountGuard`, an ASGI wrapper, the same for both.

Slow clients are bounded too (slowloris). uvicorn reads a request head for as long as the client
takes, and a connection that never sends a byte is kept for good: 500 dripping heads once held
500 descriptors for as long as their senders liked, and ~1,000 of them denied `/health`. Here a
head (and so a WebSocket handshake, which is an HTTP head) must be complete within
`head_timeout_s` of the connection or of the previous response (408 and closed otherwise), a
request body must not stall for longer than that between two reads, and at most
`max_pending_heads` connections may be sending their head at once: one more closes the one that
has been at it longest, so descriptors stay free for `/health` and new sessions. Idle
keep-alive connections are closed by uvicorn after `timeout_keep_alive` (5 s).

`uvicorn_options(settings)` is what `mcpgym serve` (and the tests' real servers) pass to uvicorn:
the protocol class, the WebSocket frame limit and the h11 buffer limit.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import Any

import h11
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcpgym.servers.settings import ServerSettings

__all__ = ["HeaderCountGuard", "limited_protocol", "uvicorn_options"]

_HEAD_END = b"\r\n\r\n"


def _raw_response(status: int, reason: str, code: str, message: str) -> bytes:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class _HeadLimit:
    """Mixin bounding each request head in bytes and in time, and each body's stalls."""

    max_header_bytes = 32 * 1024
    head_timeout_s = 10.0
    max_pending_heads = 256
    transport: Any
    server_state: Any
    _deadline: asyncio.TimerHandle | None = None
    _in_body = False

    def _head_reset(self) -> None:
        self._head_bytes = 0
        self._head_tail = b""
        self._in_head = True

    def _head_check(self, data: bytes) -> bool:
        """Count `data` against the head limit; answer 431 and return False when over it."""
        if not getattr(self, "_in_head", True):
            if self._in_body:  # progress: the stall deadline starts again
                self._arm(self._stalled)
            return True
        if not hasattr(self, "_head_bytes"):
            self._head_reset()
        if self._deadline is None:  # the first bytes of a head after a response
            self._pending_add()
        window = self._head_tail + data
        end = window.find(_HEAD_END)
        seen = len(data) if end < 0 else max(0, end - len(self._head_tail))
        self._head_bytes += seen
        if self._head_bytes > self.max_header_bytes:
            message = f"request head exceeds the limit of {self.max_header_bytes} bytes"
            self._refuse(431, "Request Header Fields Too Large", "HEADERS_TOO_LARGE", message)
            return False
        if end >= 0:
            self._head_complete()  # the rest is body (or the next pipelined request)
        else:
            self._head_tail = window[-3:]
        return True

    # -- deadlines ------------------------------------------------------------------------------

    def _arm(self, callback: Any) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(self.head_timeout_s, callback)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _pending(self) -> OrderedDict[_HeadLimit, None]:
        found: OrderedDict[_HeadLimit, None] | None = getattr(self.server_state, "_heads", None)
        if found is None:
            found = OrderedDict()
            self.server_state._heads = found
        return found

    def _pending_add(self) -> None:
        """Start this head's deadline; over `max_pending_heads`, close the oldest slow head."""
        self._arm(self._head_expired)
        pending = self._pending()
        pending[self] = None
        while len(pending) > self.max_pending_heads:
            oldest, _ = pending.popitem(last=False)
            oldest._disarm()
            oldest.transport.close()  # the connection that has dripped its head the longest

    def _head_complete(self) -> None:
        self._in_head = False
        self._disarm()
        self._pending().pop(self, None)

    def _head_expired(self) -> None:
        self._deadline = None
        if getattr(self, "_in_head", True):
            message = f"the request head did not arrive within {self.head_timeout_s} s"
            self._refuse(408, "Request Timeout", "REQUEST_TIMEOUT", message)

    def _stalled(self) -> None:
        self._deadline = None
        if self._in_body:  # the app waits for a body that stopped coming: end the connection
            self._in_body = False
            self.transport.close()

    def _body_started(self, pending: bool) -> None:
        self._in_body = pending
        if pending:
            self._arm(self._stalled)
        else:
            self._disarm()

    def _refuse(self, status: int, reason: str, code: str, message: str) -> None:
        self._disarm()
        self._pending().pop(self, None)
        if not self.transport.is_closing():
            self.transport.write(_raw_response(status, reason, code, message))
            self.transport.close()

    def _deadlines_lost(self) -> None:
        self._disarm()
        self._in_body = False
        self._pending().pop(self, None)

    def send_400_response(self, msg: str) -> None:
        self._deadlines_lost()
        self.transport.write(_raw_response(400, "Bad Request", "INVALID_REQUEST", msg))
        self.transport.close()


class LimitedH11Protocol(_HeadLimit, H11Protocol):
    """uvicorn's h11 protocol with a JSON 400, the head limit and the deadlines."""

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_reset()
        self._pending_add()  # a connection that never sends a byte is a slow head too

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadlines_lost()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        was_head = getattr(self, "_in_head", True)
        if self._head_check(data):
            super().data_received(data)
            if ((was_head and not self._in_head) or self._in_body) and not self._upgraded:
                self._body_started(self.conn.their_state is h11.SEND_BODY)

    _upgraded = False

    def handle_websocket_upgrade(self, event: Any) -> None:
        self._upgraded = True  # the socket belongs to the WebSocket protocol now
        self._body_started(False)
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        self._head_reset()
        self._body_started(False)
        super().on_response_complete()


def _httptools_base() -> type | None:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is optional
        return None
    return HttpToolsProtocol


def limited_protocol(
    max_header_bytes: int,
    parser: str = "auto",
    head_timeout_s: float = 10.0,
    max_pending_heads: int = 256,
) -> type:
    """The HTTP protocol class for uvicorn: httptools when installed (or asked), else h11."""
    base = _httptools_base() if parser in ("auto", "httptools") else None
    limits = {
        "max_header_bytes": max_header_bytes,
        "head_timeout_s": head_timeout_s,
        "max_pending_heads": max_pending_heads,
    }
    if base is None:
        return type("LimitedH11", (LimitedH11Protocol,), limits)

    def connection_made(self: Any, transport: Any) -> None:
        base.connection_made(self, transport)
        self._head_reset()
        self._pending_add()  # a connection that never sends a byte is a slow head too

    def connection_lost(self: Any, exc: Exception | None) -> None:
        self._deadlines_lost()
        base.connection_lost(self, exc)

    def data_received(self: Any, data: bytes) -> None:
        if self._head_check(data):
            base.data_received(self, data)

    def on_message_begin(self: Any) -> None:
        self._head_reset()
        base.on_message_begin(self)

    def on_headers_complete(self: Any) -> None:
        self._head_complete()
        base.on_headers_complete(self)
        upgrade = self.parser.should_upgrade() and self._should_upgrade()
        self._body_started(not upgrade)

    def handle_websocket_upgrade(self: Any) -> None:
        self._body_started(False)  # the socket belongs to the WebSocket protocol now
        base.handle_websocket_upgrade(self)

    def on_message_complete(self: Any) -> None:
        self._body_started(False)
        base.on_message_complete(self)

    return type(
        "LimitedHttpTools",
        (_HeadLimit, base),
        {
            "max_header_bytes": max_header_bytes,
            "head_timeout_s": head_timeout_s,
            "max_pending_heads": max_pending_heads,
            "connection_made": connection_made,
            "connection_lost": connection_lost,
            "data_received": data_received,
            "on_message_begin": on_message_begin,
            "on_headers_complete": on_headers_complete,
            "on_message_complete": on_message_complete,
            "handle_websocket_upgrade": handle_websocket_upgrade,
        },
    )


class HeaderCountGuard:
    """ASGI wrapper refusing requests (and upgrades) with more than `max_headers` headers (431)."""

    def __init__(self, app: ASGIApp, max_headers: int) -> None:
        self.app = app
        self.max_headers = max_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind in ("http", "websocket") and len(scope["headers"]) > self.max_headers:
            message = f"request has more than {self.max_headers} headers"
            body = json.dumps({"error": {"code": "HEADERS_TOO_LARGE", "message": message}})
            prefix = "http.response" if kind == "http" else "websocket.http.response"
            if kind == "websocket" and prefix not in scope.get("extensions", {}):
                await send({"type": "websocket.close", "code": 1008})
                return
            headers = [(b"content-type", b"application/json")]
            await send({"type": f"{prefix}.start", "status": 431, "headers": headers})
            await send({"type": f"{prefix}.body", "body": body.encode()})
            return
        await self.app(scope, receive, send)


def uvicorn_options(settings: ServerSettings, parser: str = "auto") -> dict[str, Any]:
    """Keyword arguments for `uvicorn.run`/`uvicorn.Config` that enforce the settings' limits.

    The WebSocket limit is twice the frame limit so a frame just over it still reaches the
    dispatcher and gets a structured `VALIDATION_ERROR` rather than a bare close 1009.
    """
    http = limited_protocol(
        settings.max_header_bytes, parser, settings.head_timeout_s, settings.max_pending_heads
    )
    return {
        "http": http,
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "ws_max_size": settings.max_frame_bytes * 2,
        "ws_max_queue": 16,
        "ws_per_message_deflate": False,
    }
