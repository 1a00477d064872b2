"""Operator routes of `/mcp` episodes (simulation mode; what they are: servers/mcp/episodes.py).

    POST   /mcp/episodes {"reset": {...}} → 201 {"episode", "url", "observation", "reward", "done"}
    GET    /mcp/episodes/ID               → 200 the episode's record
    DELETE /mcp/episodes/ID               → 200 the record; the instance is closed

Only the operator may call them (the server's `--token`; anyone when the server has no token):
opening an episode chooses its reset options, which a principal token never may (the same rule
as `/ws`, docs/security.md). Every refusal is a JSON `{"error": {...}}` with a 4xx status: a body
that is not a JSON object, a `reset` that is not one, options the environment's `reset` refuses
or raises on (422), a body over `MAX_BODY_BYTES` (413), an unknown id (404). Only a full server
answers 503 (`CAPACITY_REACHED`, retry later).
"""

from __future__ import annotations

from math import isfinite
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpgym._hints import exception_text
from mcpgym.errors import CapacityReached, InvalidJSON, InvalidRequest, MCPGymError
from mcpgym.runtime import crashes
from mcpgym.servers import wire_json
from mcpgym.servers.dispatch import Dispatcher
from mcpgym.servers.guards.security import bearer_role, forbidden, origin_allowed, unauthorized
from mcpgym.servers.mcp.episode_query import EPISODE_PARAM
from mcpgym.servers.mcp.episodes import McpEpisodes
from mcpgym.servers.responses import StrictJSONResponse, json_reply
from mcpgym.servers.sessions import SessionManager
from mcpgym.servers.settings import ServerSettings

__all__ = ["EPISODE_ROUTES", "MAX_BODY_BYTES"]

MAX_BODY_BYTES = 64 * 1024
"""The largest `POST /mcp/episodes` body: reset options are small."""


def _error(status: int, code: str, message: str, **detail: Any) -> JSONResponse:
    return StrictJSONResponse({"error": {"code": code, "message": message, **detail}}, status)


def _refusal(request: Request) -> Response | None:
    """403/401 unless the caller is the operator (or the server has no token at all)."""
    settings: ServerSettings = request.app.state.settings
    headers = Headers(scope=request.scope)
    if not origin_allowed(headers.get("origin"), settings):
        return forbidden("Origin not allowed")
    found = bearer_role(headers, settings)
    if found is None:
        return unauthorized()
    if found[0] == "principal":
        return forbidden("opening or reading episodes chooses reset options: operator token only")
    return None


async def _body(request: Request) -> Any:
    size, chunks = 0, []
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:  # strict: NaN, 1e999 and nesting too deep are refused, as bad JSON is (422)
        return wire_json.loads(raw, "the body")
    except InvalidJSON as err:
        raise InvalidRequest(err.message, errors=[{"field": "body"}]) from None


class _TooLarge(Exception):
    pass


async def open_episode(request: Request) -> Response:
    """`POST /mcp/episodes`: reset a fresh instance with `reset`; its id and first observation."""
    if (refused := _refusal(request)) is not None:
        return refused
    sessions: SessionManager = request.app.state.sessions
    try:
        body = await _body(request)
        if not isinstance(body, dict):
            raise InvalidRequest("the body must be a JSON object", errors=[{"field": "body"}])
        unknown = sorted(set(body) - {"reset"})  # pyright: ignore[reportUnknownArgumentType]
        if unknown:
            raise InvalidRequest(f"unknown field(s) {unknown}; expected reset", fields=unknown)
        reset: Any = body.get("reset", {})  # pyright: ignore[reportUnknownMemberType]
        reset = {} if reset is None else reset
        if not isinstance(reset, dict):
            raise InvalidRequest("reset must be a JSON object", errors=[{"field": "reset"}])
        options: dict[str, Any] = {str(k): v for k, v in reset.items()}  # pyright: ignore[reportUnknownVariableType]
    except _TooLarge:
        return _error(413, "VALIDATION_ERROR", f"the body exceeds {MAX_BODY_BYTES} bytes")
    except MCPGymError as err:
        return StrictJSONResponse({"error": err.to_dict()}, status_code=err.http_status)
    try:
        session = await sessions.open(transport="mcp")
    except CapacityReached as err:
        return StrictJSONResponse({"error": err.to_dict()}, 503, headers={"Retry-After": "1"})
    except MCPGymError as err:  # the factory raised: the environment's fault, not the caller's
        return StrictJSONResponse({"error": err.to_dict()}, status_code=err.http_status)
    try:
        payload = await Dispatcher(max_frame_bytes=MAX_BODY_BYTES).reset(session, options)
        episode = await McpEpisodes.of(sessions).open(options, session)
    except MCPGymError as err:  # what the environment's reset refused or raised: the caller's
        await sessions.close(session)
        status = err.http_status if err.http_status < 500 else 422
        return StrictJSONResponse(
            {"error": err.to_dict() | {"message": f"reset refused: {err.message}"}}, status
        )
    except Exception as exc:
        crashes.record(session.env, f"{type(session.env).__name__}.reset (MCP episode)", exc)
        await sessions.close(session)
        return _error(422, "RESET_REFUSED", f"reset refused: {exception_text(exc)}")
    reward = payload.get("reward")
    if reward is not None and not _finite(reward):
        episode.failed, reward = "the reset's reward is not a finite number", None
    episode.reset_reward = reward
    episode.done = bool(payload.get("done"))
    body_out = {
        "episode": episode.id,
        "url": f"/mcp?{EPISODE_PARAM}={episode.id}",
        "observation": payload.get("observation"),
        "reward": payload.get("reward"),
        "done": episode.done,
    }
    return await json_reply(body_out, status_code=201)


def _episodes(request: Request) -> McpEpisodes:
    sessions: SessionManager = request.app.state.sessions
    return McpEpisodes.of(sessions)


def _missing() -> JSONResponse:
    return _error(404, "NOT_FOUND", "unknown episode (or its record expired)")


async def read_episode(request: Request) -> Response:
    """`GET /mcp/episodes/ID`: the episode's record (reward, done, every scored call)."""
    if (refused := _refusal(request)) is not None:
        return refused
    episode = _episodes(request).get(str(request.path_params["episode"]))
    return _missing() if episode is None else await json_reply(episode.record())


async def close_episode(request: Request) -> Response:
    """`DELETE /mcp/episodes/ID`: close the episode's instance; its final record."""
    if (refused := _refusal(request)) is not None:
        return refused
    final = await _episodes(request).end(str(request.path_params["episode"]))
    return _missing() if final is None else await json_reply(final)


EPISODE_ROUTES = [
    Route("/mcp/episodes", open_episode, methods=["POST"]),
    Route("/mcp/episodes/{episode}", read_episode, methods=["GET"]),
    Route("/mcp/episodes/{episode}", close_episode, methods=["DELETE"]),
]
"""The routes `create_app` mounts in simulation mode."""


def _finite(value: object) -> bool:
    """A finite number (an int too large for a float is not: OverflowError, not a crash)."""
    if not isinstance(value, int | float):
        return False
    try:
        return isfinite(value)
    except OverflowError:
        return False
