"""The `/ws` endpoint: one persistent session per connection, OpenEnv-compatible frames."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketState

from mcpgym.errors import CapacityReached, ExecutionError, MCPGymError
from mcpgym.servers import wire_json
from mcpgym.servers.dispatch import Dispatcher, error_frame
from mcpgym.servers.security import bearer_role, forbidden, origin_allowed, unauthorized
from mcpgym.servers.sessions import SessionManager

__all__ = ["websocket_endpoint"]

log = logging.getLogger("mcpgym.servers")

# Close codes: 1000 normal, 1001 going away (idle reap), 1011 server error, 1013 try again later.
_CLOSE_NORMAL, _CLOSE_IDLE, _CLOSE_ERROR, _CLOSE_BUSY = 1000, 1001, 1011, 1013


def _encode(reply: dict[str, Any]) -> str:
    """Strict JSON; a reply JSON cannot carry (the environment put NaN or an object in an
    observation) becomes an EXECUTION_ERROR frame for this request only."""
    try:
        return wire_json.dumps(reply)
    except (TypeError, ValueError) as exc:
        err = ExecutionError(f"the reply cannot be sent as JSON: {str(exc)[:200]}")
        return wire_json.dumps(error_frame(err, reply.get("id")))


async def websocket_endpoint(websocket: WebSocket) -> None:
    """Serve one client: accept, open a session, then answer frames until close."""
    sessions: SessionManager = websocket.app.state.sessions
    dispatcher: Dispatcher = websocket.app.state.dispatcher
    settings = websocket.app.state.settings
    if not origin_allowed(websocket.headers.get("origin"), settings):
        await _deny(websocket, forbidden("Origin not allowed"))
        return
    role = bearer_role(websocket.headers, settings)
    if role is None:
        await _deny(websocket, unauthorized())
        return
    if role[0] == "principal":  # /ws is operator infrastructure: reset picks the identity
        await _deny(websocket, forbidden("/ws needs the operator token; principals use /mcp"))
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


async def _deny(websocket: WebSocket, response: Response) -> None:
    """Refuse the upgrade with an HTTP response (401/403 and a JSON body) where the server
    supports it (uvicorn does), else with close code 1008 (policy violation) before accepting."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        await websocket.send_denial_response(response)
    else:
        await websocket.close(code=1008)


def _is_disconnect(exc: BaseException) -> bool:
    name = type(exc).__name__
    return name in {
        "WebSocketDisconnect",
        "ClientDisconnected",
        "ConnectionClosed",
        "ConnectionClosedError",
    } or (isinstance(exc, RuntimeError) and "close" in str(exc).lower())
