"""The `/ws` endpoint: one persistent session per connection, OpenEnv-compatible frames."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketState

from mcpgym.errors import CapacityReached, ExecutionError, MCPGymError
from mcpgym.servers import wire_json
from mcpgym.servers.dispatch import Dispatcher, error_frame
from mcpgym.servers.guards.security import bearer_role, forbidden, origin_allowed, unauthorized
from mcpgym.servers.openenv.dialect import websocket_attach
from mcpgym.servers.sessions import SessionManager
from mcpgym.servers.wire_json import encode_reply, is_small

__all__ = ["websocket_endpoint"]

log = logging.getLogger("mcpgym.servers")

# Close codes: 1000 normal, 1001 going away (idle reap), 1011 server error, 1013 try again later.
_CLOSE_NORMAL, _CLOSE_IDLE, _CLOSE_ERROR, _CLOSE_BUSY = 1000, 1001, 1011, 1013
_CLOSE_ENDED = 4003  # the server ended the session (its reason says why)


def _encode(reply: dict[str, Any]) -> str:
    """Strict JSON; a reply JSON cannot carry (the environment put NaN or an object in an
    observation) becomes an EXECUTION_ERROR frame for this request only."""
    try:
        return wire_json.dumps(reply)
    except (TypeError, ValueError) as exc:
        err = ExecutionError(f"the reply cannot be sent as JSON: {str(exc)[:200]}")
        return wire_json.dumps(error_frame(err, reply.get("id")))


async def _encode_big(reply: dict[str, Any]) -> str:
    """`_encode` for a reply that may be big: part by part, in a worker thread."""
    try:
        return await encode_reply(reply)
    except (TypeError, ValueError) as exc:
        err = ExecutionError(f"the reply cannot be sent as JSON: {str(exc)[:200]}")
        return wire_json.dumps(error_frame(err, reply.get("id")))


class _Endpoint:
    """The `/ws` ASGI app (a plain object, so Starlette hands it the raw `receive`/`send`).

    The handshake (origin, token, accept, denials, closes) goes through Starlette's `WebSocket`;
    the frames of an open session use uvicorn's `receive`/`send` directly, which spares two
    wrapper coroutines per frame. Those wrappers only check the order of ASGI messages, which
    this loop keeps by construction: receive until `websocket.disconnect`, send only text.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _serve(WebSocket(scope, receive, send), receive, send)


websocket_endpoint = _Endpoint()
"""Serve one client: accept, open a session, then answer frames until close."""


async def _serve(websocket: WebSocket, receive: Receive, send: Send) -> None:
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
            if session.end_reason is not None:  # ended by the server (e.g. its memory budget)
                await websocket.close(code=_CLOSE_ENDED, reason=session.end_reason[:120])
            else:
                await websocket.close(code=_CLOSE_IDLE, reason="idle timeout")

    session.on_reap = close_idle
    code = _CLOSE_NORMAL
    watch = _Watch(receive)
    watchdog = _Watchdog.of_running_loop()
    calls = watchdog.calls
    task = asyncio.current_task()
    assert task is not None
    handle = dispatcher.handle_text
    try:
        while True:
            reader, watch.reader = watch.reader, None
            message = await (reader if reader is not None else receive())
            if message["type"] != "websocket.receive":  # websocket.disconnect
                return
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            # In flight: `busy` keeps the reaper away; the watchdog notices a client that
            # leaves during a long call. Both cost a counter and a set entry per frame.
            session.busy += 1
            watch.since = watchdog.tick
            calls[watch] = task
            if not watchdog.running:
                watchdog.start()
            try:
                reply, close_after = await handle(session, text)
            except asyncio.CancelledError:
                if not watch.gone:
                    raise
                task.uncancel()  # the client left mid-call: the call was cancelled or detached
                return
            finally:
                del calls[watch]
                session.busy -= 1
                session.touch()
            if session.closed:  # reaped while we worked
                return
            if reply is not None:
                small, session.small_reply = session.small_reply, False
                if small or is_small(reply):
                    text = _encode(reply)
                else:
                    text = await _encode_big(reply)
                await send({"type": "websocket.send", "text": text})
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


class _Watch:
    """One connection's view for the watchdog: a reader armed while a long call runs."""

    __slots__ = ("gone", "reader", "receive", "since")

    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.reader: asyncio.Future[Any] | None = None
        self.gone = False
        self.since = 0


class _Watchdog:
    """Cancels a call in flight when its client disconnects, at almost no cost per frame.

    Nothing reads a socket while its frame is being handled, so a departed client would go
    unnoticed until the call ended. Every connection's call in flight is registered here (a dict
    entry); every `TICK_S` the watchdog arms a reader for each call that has been running for
    more than one tick (so for `TICK_S` to `2 * TICK_S`). A disconnect seen by that reader
    cancels the call (an async tool is cancelled, a sync one detached); a frame that arrives
    instead is kept and handled next, in order. One timer per event loop, running only while
    calls are in flight, instead of one per frame.
    """

    TICK_S = 0.05  # a call gets a reader after 50-100 ms (never sooner than before)
    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watchdog] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.calls: dict[_Watch, asyncio.Task[Any]] = {}
        self.tick = 0
        self.running = False

    @classmethod
    def of_running_loop(cls) -> _Watchdog:
        loop = asyncio.get_running_loop()
        dog = cls._by_loop.get(loop)
        if dog is None:
            dog = cls._by_loop[loop] = cls(loop)
        return dog

    def start(self) -> None:
        self.running = True
        self.loop.call_later(self.TICK_S, self._look)

    def _look(self) -> None:
        self.tick += 1
        if not self.calls:
            self.running = False  # restarted by the next frame
            return
        older = self.tick - 1
        for watch, task in list(self.calls.items()):
            if watch.since < older and watch.reader is None:
                self._arm(watch, task)
        self.loop.call_later(self.TICK_S, self._look)

    def _arm(self, watch: _Watch, task: asyncio.Task[Any]) -> None:
        reader = watch.reader = asyncio.ensure_future(watch.receive())
        calls = self.calls

        def arrived(done: asyncio.Future[Any]) -> None:
            if done.cancelled() or done.exception() is not None:
                return
            gone = done.result()["type"] == "websocket.disconnect"
            if gone and calls.get(watch) is task and not task.done():
                watch.gone = True
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
    return (
        name
        in {
            "WebSocketDisconnect",
            "ClientDisconnected",
            "ConnectionClosed",
            "ConnectionClosedError",
        }
        or isinstance(exc, OSError)
        or (isinstance(exc, RuntimeError) and "close" in str(exc).lower())
    )
