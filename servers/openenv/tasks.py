"""The task API as OpenEnv 0.10.0's HTTP server shapes it, over the same task set as `/tasks`.

    GET  /list_environments        ["GuessEnv"]
    GET  /{env}/splits             [{"name", "type"}, ...]
    POST /{env}/tasks              {"split"}                   -> {"tasks": [...], "env_name"}
    POST /{env}/num_tasks          {"split"}                   -> {"num_tasks": n}
    POST /{env}/task               {"split", "index"}          -> {"task": {...}}
    POST /{env}/task_range         {"split", "start", "stop"}  -> {"tasks": [...]}

`env` is the environment class's name, matched without regard to case (OpenEnv's default name
is the class name too). A task's `reset` options, or `reset(split=, index=)`, start its episode.
Failures are mcpgym's structured `{"error": {...}}` replies: an unknown environment, split or
index is a 404, a body that is not the request object OpenEnv sends (unknown fields included)
a 422. OpenEnv itself answers a bad index with a 400 and FastAPI's `{"detail"}`: the paths and
success bodies match, the error bodies are mcpgym's. These routes come after every other route,
so mcpgym's own (`/tasks/{split}`, `/web/...`) win where a path could match both.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpgym._hints import validation_errors
from mcpgym.errors import InvalidJSON, InvalidRequest, MCPGymError
from mcpgym.servers.responses import error_response, json_body
from mcpgym.servers.task_replies import MAX_TASKS_PER_REPLY, task_set_reply
from mcpgym.tasks import TaskNotFound, TaskSet

__all__ = ["OPENENV_TASK_ROUTES"]

_M = TypeVar("_M", bound=BaseModel)


class _Split(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    split: str


class _One(_Split):
    index: int


class _Range(_Split):
    start: int | None = None
    stop: int | None = None


def _env_name(request: Request) -> str:
    info = getattr(request.app.state, "env_info", None)
    cls = info.env_cls if info is not None else None
    return cls.__name__ if cls is not None else "environment"


def _check_env(request: Request) -> None:
    name, asked = _env_name(request), request.path_params["env"]
    if asked.lower() != name.lower():
        raise TaskNotFound(
            f"unknown environment {asked!r}; this server has {name!r}",
            field="env",
            got=asked,
            expected=[name],
        )


async def _body(request: Request, model: type[_M]) -> _M:
    """The body as `model`: read within `max_frame_bytes` (413) and parsed strictly (NaN, 1e999
    and nesting too deep are refused as bad JSON is, 422), as on every other route."""
    try:
        data: Any = await json_body(request)
    except InvalidJSON as err:
        raise InvalidRequest(err.message, errors=[{"field": "(body)"}]) from None
    if not isinstance(data, dict):
        raise InvalidRequest("the body must be a JSON object", errors=[{"field": "(body)"}])
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        errors = validation_errors(exc)
        raise InvalidRequest(
            f"invalid request: {errors[0]['field']}: {errors[0]['message']}", errors=errors
        ) from None


def _error(err: MCPGymError) -> Response:
    return error_response(err)


async def list_environments(request: Request) -> Response:
    return JSONResponse([_env_name(request)])


async def splits(request: Request) -> Response:
    try:
        _check_env(request)
    except MCPGymError as err:
        return _error(err)
    return await task_set_reply(request, lambda t: [s.model_dump() for s in t.list_splits()])


async def tasks(request: Request) -> Response:
    try:
        _check_env(request)
        body = await _body(request, _Split)
    except MCPGymError as err:
        return _error(err)
    name = _env_name(request)

    def job(t: TaskSet) -> dict[str, Any]:
        count = t.num_tasks(t.check_split(body.split))
        if count > MAX_TASKS_PER_REPLY:
            raise InvalidRequest(
                f"split {body.split!r} has {count} tasks; one reply carries at most "
                f"{MAX_TASKS_PER_REPLY}: use /{name}/task_range",
                errors=[{"field": "split", "got": body.split, "limit": MAX_TASKS_PER_REPLY}],
            )
        return {"tasks": t.list_tasks(body.split), "env_name": name}

    return await task_set_reply(request, job)


async def num_tasks(request: Request) -> Response:
    try:
        _check_env(request)
        body = await _body(request, _Split)
    except MCPGymError as err:
        return _error(err)
    return await task_set_reply(
        request, lambda t: {"num_tasks": t.num_tasks(t.check_split(body.split))}
    )


async def task(request: Request) -> Response:
    try:
        _check_env(request)
        body = await _body(request, _One)
    except MCPGymError as err:
        return _error(err)

    def job(t: TaskSet) -> dict[str, Any]:
        t.check_split(body.split)
        return {"task": t.get_task(body.split, body.index)}

    return await task_set_reply(request, job)


async def task_range(request: Request) -> Response:
    try:
        _check_env(request)
        body = await _body(request, _Range)
    except MCPGymError as err:
        return _error(err)

    def job(t: TaskSet) -> dict[str, Any]:
        count = t.num_tasks(t.check_split(body.split))
        start = 0 if body.start is None else body.start
        stop = count if body.stop is None else body.stop
        if start >= 0 and stop >= start and min(stop, count) - start > MAX_TASKS_PER_REPLY:
            raise InvalidRequest(
                f"one reply carries at most {MAX_TASKS_PER_REPLY} tasks",
                errors=[{"field": "stop", "got": stop, "limit": MAX_TASKS_PER_REPLY}],
            )
        return {"tasks": t.get_task_range(body.split, start, stop)}

    return await task_set_reply(request, job)


OPENENV_TASK_ROUTES = [
    Route("/list_environments", list_environments, methods=["GET"]),
    Route("/{env}/splits", splits, methods=["GET"]),
    Route("/{env}/tasks", tasks, methods=["POST"]),
    Route("/{env}/num_tasks", num_tasks, methods=["POST"]),
    Route("/{env}/task", task, methods=["POST"]),
    Route("/{env}/task_range", task_range, methods=["POST"]),
]
"""The routes `create_app` mounts last in simulation mode."""
