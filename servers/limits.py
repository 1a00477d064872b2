"""Wire limits that must hold before the application sees a request, on both HTTP parsers.

uvicorn bounds a request head only with h11 (16 KiB by default) and not at all with httptools,
the parser `uvicorn[standard]` installs: a 128 MiB header was once buffered in full. The protocol
classes here bound the head (request line + headers) to `max_header_bytes` on either parser and
answer with 431 and a JSON body; malformed requests get a JSON 400 instead of uvicorn's text.
The header *count* is checked by `HeaderCountGuard`, an ASGI wrapper, the same for both.

`uvicorn_options(settings)` is what `mcpgym serve` (and the tests' real servers) pass to uvicorn:
the protocol class, the WebSocket frame limit and the h11 buffer limit.
"""

from __future__ import annotations

import json
from typing import Any

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
    """Mixin counting the bytes of each request head before the parser buffers them."""

    max_header_bytes = 32 * 1024
    transport: Any

    def _head_reset(self) -> None:
        self._head_bytes = 0
        self._head_tail = b""
        self._in_head = True

    def _head_check(self, data: bytes) -> bool:
        """Count `data` against the head limit; answer 431 and return False when over it."""
        if not getattr(self, "_in_head", True):
            return True
        if not hasattr(self, "_head_bytes"):
            self._head_reset()
        window = self._head_tail + data
        end = window.find(_HEAD_END)
        seen = len(data) if end < 0 else max(0, end - len(self._head_tail))
        self._head_bytes += seen
        if self._head_bytes > self.max_header_bytes:
            message = f"request head exceeds the limit of {self.max_header_bytes} bytes"
            self.transport.write(
                _raw_response(431, "Request Header Fields Too Large", "HEADERS_TOO_LARGE", message)
            )
            self.transport.close()
            return False
        if end >= 0:
            self._in_head = False  # the rest is body (or the next pipelined request)
        else:
            self._head_tail = window[-3:]
        return True

    def send_400_response(self, msg: str) -> None:
        self.transport.write(_raw_response(400, "Bad Request", "INVALID_REQUEST", msg))
        self.transport.close()


class LimitedH11Protocol(_HeadLimit, H11Protocol):
    """uvicorn's h11 protocol with a JSON 400 and the head limit."""

    def data_received(self, data: bytes) -> None:
        if self._head_check(data):
            super().data_received(data)

    def on_response_complete(self) -> None:
        self._head_reset()
        super().on_response_complete()


def _httptools_base() -> type | None:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is optional
        return None
    return HttpToolsProtocol


def limited_protocol(max_header_bytes: int, parser: str = "auto") -> type:
    """The HTTP protocol class for uvicorn: httptools when installed (or asked), else h11."""
    base = _httptools_base() if parser in ("auto", "httptools") else None
    if base is None:
        return type("LimitedH11", (LimitedH11Protocol,), {"max_header_bytes": max_header_bytes})

    def data_received(self: Any, data: bytes) -> None:
        if self._head_check(data):
            base.data_received(self, data)

    def on_message_begin(self: Any) -> None:
        self._head_reset()
        base.on_message_begin(self)

    def on_headers_complete(self: Any) -> None:
        self._in_head = False
        base.on_headers_complete(self)

    return type(
        "LimitedHttpTools",
        (_HeadLimit, base),
        {
            "max_header_bytes": max_header_bytes,
            "data_received": data_received,
            "on_message_begin": on_message_begin,
            "on_headers_complete": on_headers_complete,
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
    return {
        "http": limited_protocol(settings.max_header_bytes, parser),
        "h11_max_incomplete_event_size": settings.max_header_bytes,
        "ws_max_size": settings.max_frame_bytes * 2,
        "ws_max_queue": 16,
        "ws_per_message_deflate": False,
    }
