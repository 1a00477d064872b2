"""The `/ws` endpoint: one persistent session per connection, OpenEnv-compatible frames."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketState

from mcpgym.errors import CapacityReached, ExecutionError, MCPGymError
from mcpgym.servers import wire_json
from mcpgym.servers.dispatch import Dispatcher, error_frame
from mcpgym.servers.mcp_openenv import websocket_attach
from mcpgym.servers.security import bearer_role, forbidden, origin_allowed, unauthorized
from mcpgym.servers.sessions import SessionManager

__all__ = ["websocket_endpoint"]

log = logging.getLogger("mcpgym.servers")
_R = TypeVar("_R")

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
    if "session_id" in websocket.query_params:  # OpenEnv: a socket on an /mcp session
        await websocket_attach(websocket)
        return
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
    watch = _DisconnectWatch(websocket)
    try:
        while True:
            message = await watch.next_message()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            session.touch()
            session.busy += 1
            try:
                reply, close_after = await watch.during(dispatcher.handle_text(session, text))
            finally:
                session.busy -= 1
                session.touch()
            if reply is None and close_after is None:  # the client left mid-call: cancelled
                return
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
        if watch.reader is not None:
            watch.reader.cancel()
        await sessions.close(session)
        if websocket.application_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):  # the peer may already be gone
                await websocket.close(code=code)


class _DisconnectWatch:
    """Cancels a call in flight when its client disconnects, at almost no cost per frame.

    Nothing reads the socket while a frame is being handled, so a departed client would go
    unnoticed until the call ended. A call still running after `WATCH_AFTER_S` gets a reader:
    a disconnect cancels the call (an async tool is cancelled, a sync one detached); a frame
    that arrives instead is kept and handled next, in order. Fast calls cost one timer.
    """

    WATCH_AFTER_S = 0.05

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.reader: asyncio.Future[Any] | None = None
        self.gone = False
        self.in_call = False

    async def next_message(self) -> Any:
        reader, self.reader = self.reader, None
        return await (reader if reader is not None else self.websocket.receive())

    async def during(self, call: Coroutine[Any, Any, _R]) -> _R | tuple[None, None]:
        task = asyncio.current_task()
        assert task is not None
        timer = asyncio.get_running_loop().call_later(self.WATCH_AFTER_S, self._watch, task)
        self.in_call = True
        try:
            return await call
        except asyncio.CancelledError:
            if not self.gone:
                raise
            task.uncancel()
            return None, None
        finally:
            self.in_call = False
            timer.cancel()

    def _watch(self, task: asyncio.Task[Any]) -> None:
        if self.reader is not None:
            return
        reader = self.reader = asyncio.ensure_future(self.websocket.receive())

        def arrived(done: asyncio.Future[Any]) -> None:
            if done.cancelled() or done.exception() is not None:
                return
            gone = done.result()["type"] == "websocket.disconnect"
            if gone and self.in_call and not task.done():
                self.gone = True
                task.cancel()

        reader.add_done_callback(arrived)


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
