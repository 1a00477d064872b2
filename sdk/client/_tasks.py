"""Task-set reads for the clients: `list_splits`, `list_tasks`, `num_tasks`, `get_task`,
`get_task_range`, `find_task` over the server's `/tasks` routes (plain HTTP, no session).

`SyncTasks` and `AsyncTasks` are mixed into `SyncEnvClient` and `EnvClient`; `RemoteTaskSet` is
the same reads as an `mcpgym.tasks.TaskSet`, for code that takes a task set (the trainer
adapters). A reply with an error becomes `RemoteError` (its code and structured fields), an
unreachable server `ServerGone`, a slow one `RequestTimeout`.

Example:
    >>> http_base("ws://127.0.0.1:8000/guess/ws")
    'http://127.0.0.1:8000/guess'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from mcpgym.client._url import normalize_url
from mcpgym.errors import ClientError, RemoteError, RequestTimeout, ServerGone
from mcpgym.tasks import Split, Task, TaskSet

__all__ = ["AsyncTasks", "RemoteTaskSet", "SyncTasks", "http_base"]

_TIMEOUT = 30.0


def http_base(url: str) -> str:
    """The HTTP base of a server given by any URL the clients accept (its `/ws` dropped)."""
    parts = urlsplit(normalize_url(url))
    scheme = "https" if parts.scheme == "wss" else "http"
    return urlunsplit((scheme, parts.netloc, parts.path.removesuffix("/ws"), "", ""))


def _path(split: str, *rest: str) -> str:
    return "/tasks/" + "/".join(quote(p, safe="") for p in (split, *rest))


def _decode(base: str, response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        raise ClientError(
            f"{base}{response.url.path} answered HTTP {response.status_code} without JSON "
            "(does the server run in simulation mode?)",
            status=response.status_code,
        ) from None
    if not isinstance(body, dict):
        raise ClientError(f"{base}{response.url.path} answered a non-object: {body!r:.200}")
    error = body.get("error")
    if response.status_code >= 400 or error is not None:
        detail = dict(error) if isinstance(error, dict) else {}
        code = str(detail.pop("code", f"HTTP_{response.status_code}"))
        message = str(detail.pop("message", "") or f"HTTP {response.status_code}")
        raise RemoteError(code, message, status=response.status_code, **detail)
    return body


def _failure(base: str, exc: httpx.HTTPError) -> ClientError:
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimeout(f"no reply from {base} within the timeout", url=base)
    return ServerGone(f"cannot reach {base}: {exc}", url=base)


class _Reads:
    """The requests and reply parsing the twins share (no I/O)."""

    @staticmethod
    def splits(body: dict[str, Any]) -> list[Split]:
        return [Split.model_validate(s) for s in body.get("splits", [])]


def _endpoint(client: Any) -> tuple[str, dict[str, str] | None]:
    """A client's HTTP base and headers (its WebSocket URL and headers: the same server)."""
    headers = getattr(getattr(client, "_transport", None), "headers", None)
    return http_base(client._core.url), headers


class SyncTasks:
    """Blocking task-set reads, mixed into `SyncEnvClient` (the same server, over HTTP)."""

    def _tasks_endpoint(self) -> tuple[str, dict[str, str] | None]:
        return _endpoint(self)

    def _tasks_get(self, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        base, headers = self._tasks_endpoint()
        try:
            with httpx.Client(timeout=_TIMEOUT, headers=headers) as http:
                return _decode(base, http.get(base + path, params=params))
        except httpx.HTTPError as exc:
            raise _failure(base, exc) from exc

    def list_splits(self) -> list[Split]:
        """The server's task splits."""
        return _Reads.splits(self._tasks_get("/tasks"))

    def list_tasks(self, split: str) -> list[Task]:
        """Every task of `split`."""
        return list(self._tasks_get(_path(split))["tasks"])

    def num_tasks(self, split: str) -> int:
        """How many tasks `split` has."""
        return int(self._tasks_get(_path(split, "count"))["num_tasks"])

    def get_task(self, split: str, index: int) -> Task:
        """Task `index` of `split`."""
        return dict(self._tasks_get(_path(split, str(index)))["task"])

    def get_task_range(self, split: str, start: int, stop: int) -> list[Task]:
        """Tasks `start` to `stop - 1` of `split` (`stop` past the end is clipped)."""
        body = self._tasks_get(_path(split), {"start": start, "stop": stop})
        return list(body["tasks"])

    def find_task(self, task_id: str) -> Task:
        """The task with id `task_id`."""
        return dict(self._tasks_get("/tasks", {"id": task_id})["task"])


class AsyncTasks:
    """The asyncio twin of `SyncTasks`, mixed into `EnvClient`."""

    def _tasks_endpoint(self) -> tuple[str, dict[str, str] | None]:
        return _endpoint(self)

    async def _tasks_get(
        self, path: str, params: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        base, headers = self._tasks_endpoint()
        try:
            async with httpx.AsyncClient(timeout=_TIMEOUT, headers=headers) as http:
                return _decode(base, await http.get(base + path, params=params))
        except httpx.HTTPError as exc:
            raise _failure(base, exc) from exc

    async def list_splits(self) -> list[Split]:
        """The server's task splits."""
        return _Reads.splits(await self._tasks_get("/tasks"))

    async def list_tasks(self, split: str) -> list[Task]:
        """Every task of `split`."""
        return list((await self._tasks_get(_path(split)))["tasks"])

    async def num_tasks(self, split: str) -> int:
        """How many tasks `split` has."""
        return int((await self._tasks_get(_path(split, "count")))["num_tasks"])

    async def get_task(self, split: str, index: int) -> Task:
        """Task `index` of `split`."""
        return dict((await self._tasks_get(_path(split, str(index))))["task"])

    async def get_task_range(self, split: str, start: int, stop: int) -> list[Task]:
        """Tasks `start` to `stop - 1` of `split` (`stop` past the end is clipped)."""
        body = await self._tasks_get(_path(split), {"start": start, "stop": stop})
        return list(body["tasks"])

    async def find_task(self, task_id: str) -> Task:
        """The task with id `task_id`."""
        return dict((await self._tasks_get("/tasks", {"id": task_id}))["task"])


class _Reader(SyncTasks):
    def __init__(self, base: str, headers: dict[str, str] | None) -> None:
        self._where = (base, headers)

    def _tasks_endpoint(self) -> tuple[str, dict[str, str] | None]:
        return self._where


class RemoteTaskSet(TaskSet):
    """The task set of the server at `base_url`, read over HTTP (a `TaskSet` like any other).

    Example:
        >>> RemoteTaskSet("http://127.0.0.1:8000").base_url
        'http://127.0.0.1:8000'
    """

    def __init__(self, base_url: str, *, headers: Mapping[str, str] | None = None) -> None:
        self.base_url = http_base(base_url)
        self._reader = _Reader(self.base_url, dict(headers) if headers else None)

    def list_splits(self) -> list[Split]:
        return self._reader.list_splits()

    def list_tasks(self, split: str) -> list[Task]:
        return self._reader.list_tasks(split)

    def num_tasks(self, split: str) -> int:
        return self._reader.num_tasks(split)

    def get_task(self, split: str, index: int) -> Task:
        return self._reader.get_task(split, index)

    def get_task_range(self, split: str, start: int, stop: int) -> list[Task]:
        return self._reader.get_task_range(split, start, stop)

    def find_task(self, task_id: str) -> Task:
        return self._reader.find_task(task_id)

    def load_task(self, split: str, index: int) -> Task:
        return self._reader.get_task(split, index)
