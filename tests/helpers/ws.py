"""Bounded receives for Starlette's TestClient WebSocket sessions.

`WebSocketTestSession.receive()` blocks forever; these helpers fail after a deadline instead, so a
server that never answers (or never closes) fails the test quickly with a clear message.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.testclient import WebSocketTestSession


def receive(ws: WebSocketTestSession, timeout: float = 5.0) -> dict[str, Any]:
    """The next ASGI message the app sent (`websocket.send` or `websocket.close`)."""

    async def recv() -> dict[str, Any]:
        with anyio.fail_after(timeout):
            # The session's outbound stream; receive() itself has no timeout.
            return await ws._send_rx.receive()

    try:
        return ws.portal.call(recv)
    except TimeoutError:
        raise AssertionError(f"the server sent nothing within {timeout} s") from None


def receive_frame(ws: WebSocketTestSession, timeout: float = 5.0) -> dict[str, Any]:
    """The next JSON frame; fails if the server closed the socket instead."""
    message = receive(ws, timeout)
    assert message["type"] == "websocket.send", f"expected a frame, got {message}"
    return json.loads(message["text"])


def receive_close(ws: WebSocketTestSession, timeout: float = 5.0) -> int:
    """Wait for the server to close the socket; returns the close code."""
    message = receive(ws, timeout)
    assert message["type"] == "websocket.close", f"expected a close, got {message}"
    return int(message.get("code", 1000))


def request(
    ws: WebSocketTestSession, frame: dict[str, Any], timeout: float = 5.0
) -> dict[str, Any]:
    """Send one frame and return the reply frame."""
    ws.send_text(json.dumps(frame))
    return receive_frame(ws, timeout)
