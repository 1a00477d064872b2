"""Task routes (simulation mode): the environment's task set (`mcpgym.tasks`) over HTTP, as JSON.

    GET /tasks                         {"splits": [{"name", "type", "num_tasks"}, ...]}
    GET /tasks?id=ID                   {"task": {...}}
    GET /tasks/{split}                 {"split", "num_tasks", "start", "stop", "tasks": [...]}
    GET /tasks/{split}?start=0&stop=10 the same, for tasks[start:stop]
    GET /tasks/{split}/count           {"split", "num_tasks"}
    GET /tasks/{split}/{index}         {"task": {...}}

The set is the environment class's `task_set` (an environment without one has no splits). Every
failure is a structured `{"error": {...}}` reply: an unknown split, index or id is a 404, a
malformed index or range a 422, and one listing returns at most `MAX_TASKS_PER_REPLY` tasks
(ask for a range beyond that). Task sets may read files (`from_dataset`), so they run in a
worker thread.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpgym.errors import InvalidRequest
from mcpgym.servers.task_replies import MAX_TASKS_PER_REPLY, task_set_reply
from mcpgym.tasks import TaskSet

__all__ = ["MAX_TASKS_PER_REPLY", "TASK_ROUTES"]


def _query_int(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    text = raw.strip()
    if not text.lstrip("-").isdigit():
        raise InvalidRequest(
            f"{name} must be an integer, not {raw!r}", errors=[{"field": name, "got": raw}]
        )
    return int(text)


async def splits(request: Request) -> Response:
    task_id = request.query_params.get("id")

    def job(tasks: TaskSet) -> dict[str, Any]:
        if task_id is not None:
            return {"task": tasks.find_task(task_id)}
        found = tasks.list_splits()
        return {"splits": [{**s.model_dump(), "num_tasks": tasks.num_tasks(s.name)} for s in found]}

    return await task_set_reply(request, job)


async def listing(request: Request) -> Response:
    split = request.path_params["split"]

    def job(tasks: TaskSet) -> dict[str, Any]:
        count = tasks.num_tasks(tasks.check_split(split))
        start = _query_int(request, "start")
        stop = _query_int(request, "stop")
        start = 0 if start is None else start
        stop = count if stop is None else stop
        if start >= 0 and stop >= start and min(stop, count) - start > MAX_TASKS_PER_REPLY:
            raise InvalidRequest(
                f"split {split!r} has {count} tasks; one reply carries at most "
                f"{MAX_TASKS_PER_REPLY}: ask for ?start=&stop= ranges",
                errors=[{"field": "stop", "got": stop, "limit": MAX_TASKS_PER_REPLY}],
            )
        found = tasks.get_task_range(split, start, stop)
        return {
            "split": split,
            "num_tasks": count,
            "start": start,
            "stop": start + len(found),
            "tasks": found,
        }

    return await task_set_reply(request, job)


async def count(request: Request) -> Response:
    split = request.path_params["split"]
    return await task_set_reply(
        request, lambda t: {"split": split, "num_tasks": t.num_tasks(t.check_split(split))}
    )


async def one(request: Request) -> Response:
    split, index = request.path_params["split"], request.path_params["index"]

    def job(tasks: TaskSet) -> dict[str, Any]:
        tasks.check_split(split)
        return {"task": tasks.get_task(split, _index(index))}

    return await task_set_reply(request, job)


def _index(raw: str) -> int:
    if not raw.strip().lstrip("-").isdigit():
        raise InvalidRequest(
            f"index must be an integer, not {raw!r}", errors=[{"field": "index", "got": raw}]
        )
    return int(raw)


TASK_ROUTES = [
    Route("/tasks", splits, methods=["GET"]),
    Route("/tasks/{split}", listing, methods=["GET"]),
    Route("/tasks/{split}/count", count, methods=["GET"]),
    Route("/tasks/{split}/{index}", one, methods=["GET"]),
]
"""The routes `create_app` mounts in simulation mode."""
