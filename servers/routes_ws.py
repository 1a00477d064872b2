"""The `/ws` endpoint: one persistent session per connection, OpenEnv-compatible frames."""

from __future__ import annotations

import contextlib
import json
import logging

from starlette.websockets import WebSocket, WebSocketState

from mcpgym.errors import CapacityReached, MCPGymError
from mcpgym.servers.dispatch import Dispatcher, error_frame
from mcpgym.servers.mcp_openenv import websocket_attach
from mcpgym.servers.security import check_bearer, origin_allowed
from mcpgym.servers.sessions import SessionManager

__all__ = ["websocket_endpoint"]

log = logging.getLogger("mcpgym.servers")

# Close codes: 1000 normal, 1001 going away (idle reap), 1011 server error, 1013 try again later.
_CLOSE_NORMAL, _CLOSE_IDLE, _CLOSE_ERROR, _CLOSE_BUSY = 1000, 1001, 1011, 1013


_encode = json.JSONEncoder(separators=(",", ":"), default=str).encode  # built once: hot path


async def websocket_endpoint(websocket: WebSocket) -> None:
    """Serve one client: accept, open a session, then answer frames until close."""
    if "session_id" in websocket.query_params:  # OpenEnv: a socket on an /mcp session
        await websocket_attach(websocket)
        return
    sessions: SessionManager = websocket.app.state.sessions
    dispatcher: Dispatcher = websocket.app.state.dispatcher
    settings = websocket.app.state.settings
    if not origin_allowed(websocket.headers.get("origin"), settings):
        await websocket.close(code=1008, reason="Origin not allowed")
        return
    if check_bearer(websocket.headers, settings) is None:
        await websocket.close(code=1008, reason="missing or invalid bearer token")
        return
    await websocket.accept()
    try:
        session = await sessions.open(transport="ws")
    except MCPGymError as err:
        await websocket.send_text(_encode(error_frame(err)))
        await websocket.close(
            code=_CLOSE_BUSY if isinstance(err, CapacityReached) else _CLOSE_ERROR
        )
        return

    async def close_idle() -> None:
        if websocket.application_state == WebSocketState.CONNECTED:
            await websocket.close(code=_CLOSE_IDLE, reason="idle timeout")

    session.on_reap = close_idle
    code = _CLOSE_NORMAL
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            session.touch()
            session.busy += 1
            try:
                reply, close_after = await dispatcher.handle_text(session, text)
            finally:
                session.busy -= 1
                session.touch()
            if session.closed:  # reaped while we worked
                return
            if reply is not None:
                await websocket.send_text(_encode(reply))
            if close_after:
                return
    except Exception as exc:  # the client vanished mid-send, or a bug: end only this session
        if not _is_disconnect(exc):
            log.exception("session %s failed", session.id)
            code = _CLOSE_ERROR
    finally:
        await sessions.close(session)
        if websocket.application_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):  # the peer may already be gone
                await websocket.close(code=code)


def _is_disconnect(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name in {
        "WebSocketDisconnect",
        "ClientDisconnected",
        "ConnectionClosed",
        "ConnectionClosedError",
    } or (isinstance(exc, RuntimeError) and "close" in str(exc).lower())
