"""`create_app`: one Starlette application that serves an environment in either mode."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from mcpgym.env import Environment, EnvironmentMetadata
from mcpgym.runtime.workers import configure_shared_pool
from mcpgym.servers.debug import ExposeTracebacks
from mcpgym.servers.dispatch import Dispatcher
from mcpgym.servers.factory import make_factory
from mcpgym.servers.guards import log_redact
from mcpgym.servers.guards.limits import HeaderCountGuard
from mcpgym.servers.guards.memory_guard import MemoryGuard
from mcpgym.servers.guards.principals import ProductionEnvs
from mcpgym.servers.guards.security import BrowserGuard, no_client_registration
from mcpgym.servers.mcp.mount import McpMount
from mcpgym.servers.openenv.dialect import attached_only
from mcpgym.servers.sessions import SessionManager
from mcpgym.servers.settings import ServerSettings
from mcpgym.servers.sim import http as routes_http
from mcpgym.servers.sim.ws import websocket_endpoint
from mcpgym.tools import Mode
from mcpgym.types import Action, Observation, State

__all__ = ["EnvInfo", "create_app"]

log = logging.getLogger("mcpgym.servers")


@dataclass(slots=True)
class EnvInfo:
    """What the server learnt about the environment at start-up (from one probe instance)."""

    env_cls: type | None
    action_type: type[Action]
    observation_type: type[Observation]
    state_type: type[State]
    metadata: EnvironmentMetadata


async def _probe(factory: Any, env_cls: type | None) -> EnvInfo:
    env: Environment[Any, Any, Any] = factory()
    try:
        return EnvInfo(
            env_cls=env_cls or type(env),
            action_type=env.action_type,
            observation_type=env.observation_type,
            state_type=env.state_type,
            metadata=env.metadata(),
        )
    finally:
        await env.aclose()


async def _json_http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
    code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(status, "HTTP_ERROR")
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else None
    body = {"error": {"code": code, "message": str(detail)}}
    return JSONResponse(body, status_code=status, headers=headers)


def create_app(
    env: Any,
    *,
    mode: Mode = "simulation",
    settings: ServerSettings | None = None,
    **overrides: Any,
) -> Starlette:
    """Build the ASGI app serving `env` (an Environment class or a zero-argument factory).

    Args:
        env: the environment class, or a callable returning a fresh instance.
        mode: `"simulation"` (reset/step/state over HTTP and `/ws`) or `"production"`.
        settings: full settings; keyword `overrides` replace single fields (e.g. `max_sessions=8`).

    Example:
        >>> from mcpgym.examples.guess import GuessEnv
        >>> app = create_app(GuessEnv, max_sessions=8)
        >>> sorted(r.path for r in app.routes)[:3]
        ['/health', '/metadata', '/reset']
    """
    settings = replace(settings or ServerSettings(mode=mode), **({"mode": mode} | overrides))
    factory, env_cls = make_factory(env, settings.mode, settings.max_result_bytes)
    if settings.worker_threads is not None:
        configure_shared_pool(settings.worker_threads)
    sessions = SessionManager(
        factory,
        max_sessions=settings.max_sessions,
        max_mcp_sessions=settings.max_mcp_sessions,
        idle_timeout_s=settings.idle_timeout_s,
        reap_interval_s=settings.reap_interval_s,
        inline_factory=env_cls is not None and not getattr(env_cls, "blocking", True),
    )
    production = (
        ProductionEnvs(factory, settings.principals) if settings.mode == "production" else None
    )
    guard = (
        MemoryGuard(sessions, settings.session_memory_mb << 20)
        if settings.session_memory_mb is not None
        else None
    )
    env_info: dict[str, EnvInfo] = {}

    def tool_specs() -> dict[str, Any]:
        cls = env_info["info"].env_cls if env_info else env_cls
        return dict(getattr(cls, "tool_specs", {}))

    mcp = McpMount(
        settings=settings,
        sessions=sessions,
        production=production,
        env_cls=env_cls,
        tool_specs=tool_specs,
    )

    dispatcher = Dispatcher(
        max_frame_bytes=settings.max_frame_bytes,
        default_timeout_s=settings.step_timeout_s,
        mcp_handler=mcp.ws_frame,
        max_result_bytes=settings.max_result_bytes,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        app.state.env_info = env_info["info"] = await _probe(factory, env_cls)
        log_redact.install()  # after the server configured logging: episode ids stay out of it
        sessions.start()
        if guard is not None:
            guard.start()
        try:
            if production is not None:
                await production.for_token("")  # the live service is reset at start-up
                await mcp.start()  # MCP is what a production server is for: no lazy start
            yield
        finally:
            if guard is not None:
                await guard.stop()
            await mcp.stop()
            await sessions.stop()
            if production is not None:
                await production.close()

    routes: list[BaseRoute] = [
        Route("/health", routes_http.health, methods=["GET"]),
        Route("/metadata", routes_http.metadata, methods=["GET"]),
    ]
    if settings.mode == "simulation":  # the task routes are imported only where they are served
        from mcpgym.servers.sim.tasks import TASK_ROUTES

        routes += [
            Route("/reset", routes_http.reset, methods=["POST"]),
            Route("/step", routes_http.step, methods=["POST"]),
            Route("/state", routes_http.state, methods=["GET"]),
            Route("/schema", routes_http.schema, methods=["GET"]),
        ]
        routes += TASK_ROUTES
        from mcpgym.servers.mcp.episode_routes import EPISODE_ROUTES

        routes += EPISODE_ROUTES
    if settings.mode == "simulation" or settings.production_ws:
        routes.append(WebSocketRoute("/ws", websocket_endpoint))
    else:  # only OpenEnv's socket attached to an /mcp session (`/ws?session_id=`)
        routes.append(WebSocketRoute("/ws", attached_only))
    routes.append(Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]))
    if settings.token or settings.principals:  # tell OAuth-first clients a token is wanted
        routes.append(Route("/register", no_client_registration, methods=["POST"]))
    if settings.web:  # the browser UI: imported only when asked for
        from mcpgym.servers.web import web_routes

        routes += web_routes(settings)
    if settings.mode == "simulation" and settings.ors_wire:  # before OpenEnv's: it extends two
        from mcpgym.servers.ors.routes import ORS_WIRE_ROUTES

        routes += ORS_WIRE_ROUTES
    if settings.mode == "simulation":  # OpenEnv's task-API paths are patterns: they go last
        from mcpgym.servers.openenv.tasks import OPENENV_TASK_ROUTES

        routes += OPENENV_TASK_ROUTES
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(HeaderCountGuard, max_headers=settings.max_headers),
            Middleware(BrowserGuard, settings=settings),
        ]
        + ([Middleware(ExposeTracebacks, settings=settings)] if settings.debug else []),
        exception_handlers={HTTPException: _json_http_error},  # 404, 405: JSON like the rest
    )
    app.state.settings = settings
    app.state.sessions = sessions
    app.state.dispatcher = dispatcher
    app.state.factory = factory
    app.state.mcp = mcp
    app.state.production = production
    return app
