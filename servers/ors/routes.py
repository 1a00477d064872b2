"""The ORS wire protocol (ors-sdk 0.1.0; openreward 0.1.167's client too) in simulation mode.

`mcpgym serve --ors-wire` (`ServerSettings.ors_wire`) adds these routes at the root, where ORS
clients look for them (their HTTP client resolves every path against the host, so a prefix
cannot be used):

    POST /create_session            SSE: `task_id` = a new session id, then `end`
    POST /create                    {"split", "index"} | {"task_spec"}: reset -> {"sid"}
    POST /ping                      keeps the session alive
    GET  /{env}/prompt              the episode's prompt, as ORS blocks
    GET  /{env}/task_tools          the session's tools     GET /{env}/tools  the class's tools
    POST /{env}/call                {"name", "input", "task_id"?}: one step, as SSE
    POST /delete, /delete_session   close the session (idempotent)
    GET  /version

Every route but the first and the listings takes the session id in `X-Session-ID`. The task
listings (`/list_environments`, `/{env}/splits`, `/tasks`, `/num_tasks`, `/task`,
`/task_range`) are OpenEnv's task routes, which have ORS's paths and shapes; here `/task` and
`/task_range` also name `env_name`, which openreward reads. Each `/{env}/...` path is served
bare as well (`/call`, `/splits`, ...): openreward uses those for an environment without a
variant. What maps is in `ors_wire_map`; a tool call that outlives its connection keeps
running, and the client's retry with the `task_id` it was given gets its result (never a
second step).

Security is `/ws`'s: when `--token` is set every session route needs it (as
`Authorization: Bearer` or ORS's `X-API-Key`), a principal's token is refused (403), browser
origins are checked, bodies are strict JSON within `--max-frame-bytes`, and sessions share
`--max-sessions` and `--idle-timeout` with `/ws`. Errors are mcpgym's structured bodies plus a
`detail` string, which is what ORS clients print.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from pydantic import ValidationError as PydanticValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mcpgym import __version__
from mcpgym._hints import validation_errors
from mcpgym.errors import ExecutionError, InvalidRequest, MCPGymError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.runtime import crashes
from mcpgym.servers import wire_json
from mcpgym.servers.guards.security import bearer_role, origin_allowed
from mcpgym.servers.openenv import tasks as openenv
from mcpgym.servers.ors.mapping import prompt_blocks, sse_event, tool_spec
from mcpgym.servers.ors.sessions import (
    SID_CHARS,
    CallBody,
    CreateBody,
    LeaseBody,
    OrsSession,
    Registry,
    start_call,
    stream_call,
)
from mcpgym.servers.responses import StrictJSONResponse, json_body
from mcpgym.servers.sessions import SessionManager
from mcpgym.tasks import StaticTaskSet, Task, TaskNotFound, TaskSet, task_set_of

__all__ = ["ORS_WIRE_ROUTES"]


def _registry(request: Request) -> Registry:
    state = request.app.state
    found = getattr(state, "ors_wire", None)
    if found is None:
        found = state.ors_wire = Registry()
    return found


def _error(err: MCPGymError) -> Response:
    body = {"error": err.to_dict(), "detail": err.message}
    return StrictJSONResponse(body, status_code=err.http_status)


def _deny(status: int, code: str, message: str) -> Response:
    body = {"error": {"code": code, "message": message}, "detail": message}
    return StrictJSONResponse(body, status_code=status)


def _guard(request: Request) -> Response | None:
    """`/ws`'s rule: the operator token if one is set (Bearer or X-API-Key), no principals."""
    settings = request.app.state.settings
    if not origin_allowed(request.headers.get("origin"), settings):
        return _deny(403, "FORBIDDEN", "Origin not allowed")
    headers = request.headers
    api_key = headers.get("x-api-key")
    if api_key and "authorization" not in headers:
        headers = Headers({"authorization": f"Bearer {api_key}"})
    role = bearer_role(headers, settings)
    if role is None:
        return _deny(401, "UNAUTHORIZED", "missing or invalid token (Bearer or X-API-Key)")
    if role[0] == "principal":
        return _deny(403, "FORBIDDEN", "the ORS wire needs the operator token; principals use /mcp")
    return None


def _sid(request: Request) -> str:
    sid = request.headers.get("x-session-id", "").strip()
    if not sid:
        raise InvalidRequest("X-Session-ID header is required", errors=[{"field": "X-Session-ID"}])
    if len(sid) > 128 or not set(sid) <= SID_CHARS:
        raise InvalidRequest(
            "X-Session-ID must be 1-128 letters, digits or -_.:", errors=[{"field": "X-Session-ID"}]
        )
    return sid


async def _body(request: Request, model: type[Any]) -> Any:
    data = await json_body(request)
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        errors = validation_errors(exc)
        raise InvalidRequest(
            f"invalid request: {errors[0]['field']}: {errors[0]['message']}", errors=errors
        ) from None


def _env_cls(request: Request) -> Any:
    info = getattr(request.app.state, "env_info", None)
    return info.env_cls if info is not None else None


def _task_set(request: Request) -> TaskSet:
    return task_set_of(_env_cls(request)) or StaticTaskSet({})


def _check_env(request: Request, name: str | None) -> None:
    if name is not None and name.lower() != openenv._env_name(request).lower():  # pyright: ignore[reportPrivateUsage]
        raise TaskNotFound(
            f"unknown environment {name!r}; this server has {openenv._env_name(request)!r}",  # pyright: ignore[reportPrivateUsage]
            field="env",
            got=name,
        )


Handler = Callable[[Request], Awaitable[Response]]


def _endpoint(session_route: bool) -> Callable[[Handler], Handler]:
    """Wrap a handler: guard (session routes), the env path check, errors as JSON replies."""

    def wrap(handler: Handler) -> Handler:
        async def endpoint(request: Request) -> Response:
            if session_route and (denied := _guard(request)) is not None:
                return denied
            try:
                _check_env(request, request.path_params.get("env"))
                return await handler(request)
            except MCPGymError as err:
                return _error(err)
            except Exception as exc:  # a bug here or in the environment: a JSON 500, not text
                kind = type(exc).__name__
                detail = crashes.record(None, f"ORS wire {request.url.path}", exc)
                return _error(ExecutionError(f"{kind}: {str(exc)[:200]}", exception=kind, **detail))

        return endpoint

    return wrap


def _sse(stream: AsyncIterator[bytes]) -> Response:
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


@_endpoint(session_route=True)
async def create_session(request: Request) -> Response:
    await _body(request, LeaseBody)

    sid = _registry(request).mint()

    async def stream() -> AsyncIterator[bytes]:
        yield sse_event("task_id", sid)
        yield sse_event("end", "")

    return _sse(stream())


def _select(tasks: TaskSet, body: CreateBody) -> tuple[dict[str, Any], Task | None]:
    """The reset options (and the task) a `/create` body names."""
    spec = body.task_spec
    native: Callable[[dict[str, Any]], dict[str, Any]] | None = getattr(tasks, "ors_reset", None)
    if spec is None:
        task = tasks.get_task(str(body.split), int(body.index or 0))
    elif native is not None:  # an ORS class's own task spec, listed or not (as ORS takes it)
        return native(spec), None
    elif isinstance(spec.get("reset"), dict):
        task = spec
    elif "id" in spec:
        task = tasks.find_task(str(spec["id"]))
    else:
        raise InvalidRequest(
            "task_spec must be a task of this server's listing (an object with 'reset' or 'id')",
            errors=[{"field": "task_spec"}],
        )
    return tasks.reset_options(task), task


_BAD_VALUE = frozenset({"ValueError", "TypeError", "KeyError", "IndexError"})


def _refused(err: ExecutionError) -> MCPGymError:
    """A reset that raised `ValueError` & co. refused the task's options: the client's 422."""
    if err.detail.get("exception") not in _BAD_VALUE:
        return err
    return InvalidRequest(
        f"the environment refused the task: {err.message}", errors=[{"field": "task_spec"}]
    )


@_endpoint(session_route=True)
async def create(request: Request) -> Response:
    sid = _sid(request)
    body: CreateBody = await _body(request, CreateBody)
    _check_env(request, body.env_name)
    registry = _registry(request)
    registry.claim(sid)  # only an id /create_session handed out, once
    sessions: SessionManager = request.app.state.sessions
    registry.creating.add(sid)
    opened = False
    try:
        options, task = await run_in_threadpool(_select, _task_set(request), body)
        session = await sessions.open(transport="ors")
        try:
            session.busy += 1
            if not isinstance(session.env, MCPEnvironment):
                raise ExecutionError("the ORS wire serves tool environments (MCPEnvironment)")
            payload = await request.app.state.dispatcher.reset(session, options)
        except ExecutionError as err:
            await sessions.close(session)
            raise _refused(err) from None
        except BaseException:
            await sessions.close(session)
            raise
        finally:
            session.busy -= 1
        opened = True
    finally:
        registry.creating.discard(sid)
        if not opened:  # a refused /create opens nothing: the id stays usable
            registry.minted[sid] = None
    metadata = payload["observation"].get("metadata") or {}
    prompt = metadata.get("prompt", (task or {}).get("prompt"))
    registry.gone.pop(sid, None)
    registry.live[sid] = OrsSession(sid, session, prompt_blocks(prompt))

    async def reaped() -> None:
        registry.forget(sid)

    session.on_reap = reaped
    return StrictJSONResponse({"sid": sid})


@_endpoint(session_route=True)
async def ping(request: Request) -> Response:
    _registry(request).get(_sid(request))
    return StrictJSONResponse({"status": "ok"})


@_endpoint(session_route=True)
async def delete(request: Request) -> Response:
    sid = _sid(request)
    ors = _registry(request).forget(sid)
    if ors is not None:
        await request.app.state.sessions.close(ors.session)
    return StrictJSONResponse({"sid": sid, "deleted": ors is not None})


@_endpoint(session_route=True)
async def prompt(request: Request) -> Response:
    return StrictJSONResponse(_registry(request).get(_sid(request)).prompt)


@_endpoint(session_route=True)
async def task_tools(request: Request) -> Response:
    env = _registry(request).get(_sid(request)).session.env
    assert isinstance(env, MCPEnvironment)
    native = getattr(env, "ors_session_tools", None)  # an ORS class's own listing
    if callable(native):
        return StrictJSONResponse({"tools": await run_in_threadpool(native)})
    return StrictJSONResponse({"tools": [tool_spec(s.info) for s in env.visible_tools()]})


@_endpoint(session_route=False)
async def tools(request: Request) -> Response:
    native = getattr(_env_cls(request), "ors_tools", None)  # an ORS class lists them itself
    if callable(native):
        return StrictJSONResponse({"tools": await run_in_threadpool(native)})
    specs: dict[str, Any] = dict(getattr(_env_cls(request), "tool_specs", {}))
    mode = request.app.state.settings.mode
    found = [tool_spec(s.info) for s in specs.values() if s.visible_in(mode)]
    return StrictJSONResponse({"tools": found})


@_endpoint(session_route=True)
async def call_tool(request: Request) -> Response:
    ors = _registry(request).get(_sid(request))
    call: CallBody = await _body(request, CallBody)
    if call.task_id is not None:  # the client's retry of a call it already started
        task = ors.call(call.task_id)
        if task is None:
            raise TaskNotFound(
                f"no call {call.task_id!r} in this session", field="task_id", got=call.task_id
            )
        return _sse(stream_call(call.task_id, task))
    settings = request.app.state.settings
    call_id, task = start_call(ors, call, settings.step_timeout_s, settings.max_result_bytes)
    return _sse(stream_call(call_id, task))


@_endpoint(session_route=False)
async def version(request: Request) -> Response:
    return StrictJSONResponse({"version": __version__, "build_sha": None})


def _with_env_name(handler: Handler) -> Handler:
    """An OpenEnv task route whose success body also names `env_name` (openreward reads it),
    and whose tasks are an ORS class's own task specs where the task set has them."""

    async def endpoint(request: Request) -> Response:
        response = await handler(request)
        if response.status_code != 200:
            return response
        body = wire_json.loads(bytes(response.body))
        native = getattr(_task_set(request), "ors_task_spec", None)
        if callable(native):
            if "task" in body:
                body["task"] = native(body["task"])
            if isinstance(body.get("tasks"), list):
                body["tasks"] = [native(t) for t in body["tasks"]]
        return StrictJSONResponse({**body, "env_name": openenv._env_name(request)})  # pyright: ignore[reportPrivateUsage]

    return endpoint


def _bare(handler: Handler) -> Handler:
    """`/{env}/x` served as `/x`, for this server's environment."""

    async def endpoint(request: Request) -> Response:
        request.scope.setdefault("path_params", {})["env"] = openenv._env_name(request)  # pyright: ignore[reportPrivateUsage]
        return await handler(request)

    return endpoint


_PER_ENV: list[tuple[str, Handler, str]] = [
    ("/prompt", prompt, "GET"),
    ("/task_tools", task_tools, "GET"),
    ("/tools", tools, "GET"),
    ("/call", call_tool, "POST"),
    ("/task", _with_env_name(openenv.task), "POST"),
    ("/task_range", _with_env_name(openenv.task_range), "POST"),
    ("/tasks", _with_env_name(openenv.tasks), "POST"),
    ("/splits", openenv.splits, "GET"),
    ("/num_tasks", openenv.num_tasks, "POST"),
]

ORS_WIRE_ROUTES: list[Route] = [
    Route("/create_session", create_session, methods=["POST"]),
    Route("/create", create, methods=["POST"]),
    Route("/ping", ping, methods=["POST"]),
    Route("//ping", ping, methods=["POST"]),  # openreward joins a base URL ending in / and "/ping"
    Route("/delete", delete, methods=["POST"]),
    Route("/delete_session", delete, methods=["POST"]),
    Route("/version", version, methods=["GET"]),
    *(Route(path, _bare(h), methods=[m]) for path, h, m in _PER_ENV),
    *(Route("/{env}" + path, h, methods=[m]) for path, h, m in _PER_ENV[:7]),
]
"""The routes `create_app` mounts with `ors_wire`, before OpenEnv's task routes."""
