"""The `/harness` WebSocket: a `HarnessEnvironment` per connection, over the `/ws` frames.

A client drives a real harness episode exactly as it drives any environment over `/ws`
(DESIGN.md §5) — `reset` (starts the harness), `step` with `{"message": "..."}` (one turn),
`state`, `close` — and additionally receives the turn's events live, before the step's
observation, as `{"type": "event", "data": {<HarnessEvent>}}` frames:

    → {"type": "reset", "data": {"seed": 1}}
    ← {"type": "observation", "data": {"observation": {...}, "reward": null, "done": false}}
    → {"type": "step", "data": {"message": "Find the number."}, "id": 7}
    ← {"type": "event", "data": {"type": "tool_call", "name": "mcp__env__guess", ...}}
    ← {"type": "event", "data": {"type": "turn_complete", "response": "...", ...}}
    ← {"type": "observation", "data": {...}, "id": 7}

The servers package cannot import the harness package (DESIGN.md §2), so the route is added
from here: `add_harness_route(app, factory)` puts it into any Starlette app (one from
`create_app`, beside `/ws` and `/mcp`); `harness_app(factory)` is a small app of its own.
Bind it to 127.0.0.1 and give it a `token`: a harness runs programs on this machine.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, Callable
from typing import Any

from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketState

from mcpgym.errors import MCPGymError
from mcpgym.harness.hosted.env import HarnessEnvironment
from mcpgym.servers.dispatch import Dispatcher, error_frame
from mcpgym.servers.guards.security import check_bearer, origin_allowed
from mcpgym.servers.sessions import SessionManager
from mcpgym.servers.settings import ServerSettings
from mcpgym.servers.sim import http as routes_http

__all__ = ["HarnessWebSocket", "add_harness_route", "harness_app"]

HarnessFactory = Callable[[], HarnessEnvironment]


def _encode(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"), default=str)


class HarnessWebSocket:
    """Serves `/harness`: one `HarnessEnvironment` from `factory` per connection.

    Args:
        factory: builds a fresh `HarnessEnvironment` (its adapter included) per connection.
        token: bearer token every connection must present (strongly recommended).
        max_sessions: concurrent connections; one more gets `CAPACITY_REACHED`.
        idle_timeout_s: a connection silent this long is closed and its harness stopped.
    """

    def __init__(
        self,
        factory: HarnessFactory,
        *,
        token: str | None = None,
        max_sessions: int = 8,
        idle_timeout_s: float = 3600.0,
        max_frame_bytes: int = 4 * 1024 * 1024,
    ) -> None:
        self.settings = ServerSettings(
            token=token, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s
        )
        self.sessions = SessionManager(
            factory, max_sessions=max_sessions, idle_timeout_s=idle_timeout_s
        )
        self.dispatcher = Dispatcher(max_frame_bytes=max_frame_bytes)

    def route(self, path: str = "/harness") -> WebSocketRoute:
        """The WebSocket route, for any Starlette app."""
        return WebSocketRoute(path, self.endpoint)

    async def endpoint(self, websocket: WebSocket) -> None:
        """Serve one connection until it closes; the harness episode ends with it."""
        if not origin_allowed(websocket.headers.get("origin"), self.settings):
            await websocket.close(code=1008, reason="Origin not allowed")
            return
        if check_bearer(websocket.headers, self.settings) is None:
            await websocket.close(code=1008, reason="missing or invalid bearer token")
            return
        await websocket.accept()
        self.sessions.start()  # idempotent: the idle reaper runs once the first client came
        try:
            session = await self.sessions.open(transport="harness")
        except MCPGymError as err:
            await websocket.send_text(_encode(error_frame(err)))
            await websocket.close(code=1013)
            return
        env = session.env
        assert isinstance(env, HarnessEnvironment)

        async def send_event(event: BaseModel) -> None:
            frame = {"type": "event", "data": event.model_dump(mode="json")}
            await websocket.send_text(_encode(frame))

        async def close_idle() -> None:
            if websocket.application_state == WebSocketState.CONNECTED:
                await websocket.close(code=1001, reason="idle timeout")

        env.on_event, session.on_reap = send_event, close_idle
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                text = message.get("text") or message.get("bytes") or b""
                session.touch()
                session.busy += 1
                try:
                    reply, close_after = await self.dispatcher.handle_text(session, text)
                finally:
                    session.busy -= 1
                    session.touch()
                if session.closed:
                    return
                if reply is not None:
                    await websocket.send_text(_encode(reply))
                if close_after:
                    return
        except Exception:  # the client vanished mid-send: end only this session
            pass
        finally:
            await self.sessions.close(session)  # stops the harness and its tool server
            if websocket.application_state == WebSocketState.CONNECTED:
                with contextlib.suppress(Exception):
                    await websocket.close()

    async def aclose(self) -> None:
        """Close every connection's episode (stops every harness)."""
        await self.sessions.stop()


def add_harness_route(
    app: Starlette, factory: HarnessFactory, path: str = "/harness", **options: Any
) -> HarnessWebSocket:
    """Serve `/harness` from an existing app — e.g. one from `mcpgym.servers.create_app`, beside
    its `/ws` and `/mcp` — without the servers package knowing about harnesses.

    Example::

        app = create_app(GuessEnv)
        add_harness_route(app, lambda: HarnessEnvironment(GuessEnv, adapter()), token="secret")
    """
    harness = HarnessWebSocket(factory, **options)
    app.router.routes.append(harness.route(path))
    return harness


def harness_app(factory: HarnessFactory, **options: Any) -> Starlette:
    """A Starlette app serving `/harness` (and `/health`); `options` as for `HarnessWebSocket`.

    Example::

        app = harness_app(lambda: HarnessEnvironment(GuessEnv, ClaudeCodeAdapter(), model=m),
                          token="secret")
        uvicorn.run(app, host="127.0.0.1", port=8100)
    """
    harness = HarnessWebSocket(factory, **options)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        try:
            yield
        finally:
            await harness.aclose()

    routes = [Route("/health", routes_http.health, methods=["GET"]), harness.route()]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.sessions, app.state.settings = harness.sessions, harness.settings
    app.state.harness = harness
    return app
