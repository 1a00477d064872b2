"""The task set's HTTP replies: `/tasks` (servers/sim/tasks.py) and OpenEnv's task routes
(servers/openenv/tasks.py) serve the same set, run in a worker thread (task sets may read files),
and answer a broken task set as the environment's `EXECUTION_ERROR`. Imported only when the
task routes are, so a server starts without `mcpgym.tasks`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpgym._hints import jsonable
from mcpgym.errors import ExecutionError, MCPGymError
from mcpgym.runtime import crashes
from mcpgym.tasks import StaticTaskSet, TaskSet, task_set_of

__all__ = ["MAX_TASKS_PER_REPLY", "task_set_reply"]

MAX_TASKS_PER_REPLY = 10_000
"""The most tasks one listing carries; larger splits are read by range."""

_T = TypeVar("_T")
_EMPTY = StaticTaskSet({})


def _task_set(request: Request) -> TaskSet:
    info = getattr(request.app.state, "env_info", None)
    found = task_set_of(info.env_cls) if info is not None else None
    return found if found is not None else _EMPTY


async def task_set_reply(request: Request, job: Callable[[TaskSet], _T]) -> Response:
    """Run `job` on the app's task set in a worker thread; its value as JSON, or the error."""
    tasks = _task_set(request)
    try:
        try:
            value = await run_in_threadpool(job, tasks)
        except MCPGymError:
            raise
        except Exception as exc:  # a broken task set is the environment's fault: a 500 for it
            raise ExecutionError(
                f"the task set raised {type(exc).__name__}: {exc}",
                exception=type(exc).__name__,
                **crashes.record(None, "the task set", exc),
            ) from exc
    except MCPGymError as err:
        return JSONResponse({"error": err.to_dict()}, status_code=err.http_status)
    return JSONResponse(jsonable(value))
