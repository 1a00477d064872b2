"""HTTP routes: stateless `/reset` `/step` `/state` (a fresh instance per request) and the
read-only `/health` `/schema` `/metadata`."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpgym.errors import InvalidRequest, MCPGymError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.runtime.workers import shared_pool
from mcpgym.servers.dispatch import Dispatcher
from mcpgym.servers.responses import StrictJSONResponse, error_response, json_body, json_reply
from mcpgym.servers.sessions import Session, SessionManager
from mcpgym.types import mcp_action_adapter

__all__ = ["health", "metadata", "reset", "schema", "state", "step"]


async def _one_shot(
    request: Request, body: dict[str, Any], action: Any = None, step_timeout: Any = None
) -> dict[str, Any]:
    """Run reset (and a step) on a fresh environment that lives for this request only."""
    sessions: SessionManager = request.app.state.sessions
    dispatcher: Dispatcher = request.app.state.dispatcher
    session: Session = await sessions.open(transport="http")
    session.busy += 1  # never reaped mid-request
    try:
        payload = await dispatcher.reset(session, body)
        if action is not None:
            payload = await dispatcher.step(session, action, step_timeout)
        return payload
    finally:
        await sessions.close(session)


async def reset(request: Request) -> Response:
    try:
        return await json_reply(await _one_shot(request, await json_body(request)))
    except MCPGymError as err:
        return error_response(err)


async def step(request: Request) -> Response:
    try:
        body = await json_body(request)
        if "action" not in body:
            raise InvalidRequest(
                "body must be {'action': {...}, 'timeout_s'?: number}",
                errors=[{"field": "action", "message": "Field required"}],
            )
        extra = set(body) - {"action", "timeout_s", "reset"}
        if extra:
            raise InvalidRequest(
                f"unknown fields: {', '.join(sorted(extra))}",
                errors=[
                    {"field": f, "message": "Extra inputs are not permitted"} for f in sorted(extra)
                ],
            )
        reset_data = body.get("reset") or {}
        return await json_reply(
            await _one_shot(request, reset_data, body["action"], body.get("timeout_s"))
        )
    except MCPGymError as err:
        return error_response(err)


async def state(request: Request) -> Response:
    sessions: SessionManager = request.app.state.sessions
    try:
        session = await sessions.open(transport="http")
    except MCPGymError as err:
        return error_response(err)
    try:
        return StrictJSONResponse(request.app.state.dispatcher.state(session))
    except MCPGymError as err:
        return error_response(err)
    finally:
        await sessions.close(session)


async def health(request: Request) -> Response:
    """`{"status", "mode", "sessions", "workers"}`: `sessions` counts every open session (in
    production the MCP sessions, which share the live instances); `workers.detached` is how many
    timed-out sync calls are still running (each one's instance refuses calls until it returns)."""
    sessions: SessionManager = request.app.state.sessions
    state = request.app.state
    count = len(sessions)
    if getattr(state, "production", None) is not None:  # apps built around us may lack it
        count += state.mcp.open_sessions()
    return JSONResponse(
        {
            "status": "healthy",
            "mode": state.settings.mode,
            "sessions": count,
            "workers": shared_pool().stats(),
        }
    )


async def schema(request: Request) -> Response:
    info = request.app.state.env_info
    env_cls = info.env_cls
    if env_cls is not None and issubclass(env_cls, MCPEnvironment):
        action_schema = mcp_action_adapter.json_schema()
    else:
        action_schema = info.action_type.model_json_schema()
    return JSONResponse(
        {
            "action": action_schema,
            "observation": info.observation_type.model_json_schema(),
            "state": info.state_type.model_json_schema(),
        }
    )


async def metadata(request: Request) -> Response:
    return JSONResponse(request.app.state.env_info.metadata.model_dump(mode="json"))
