"""`/tasks` routes in-process (every hostile input gets a structured 4xx) and the clients' task
reads against a real server, with `reset(task_id=...)` over the WebSocket."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.tasks.taskset import CALENDAR_TASKS
from helpers.apps import ClientFactory
from helpers.server import run_server
from mcpgym import EnvClient, SyncEnvClient
from mcpgym.client._tasks import RemoteTaskSet, http_base
from mcpgym.errors import RemoteError, ServerGone
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app
from mcpgym.tasks import Split, StaticTaskSet, Task, TaskSet


class TaskGuess(GuessEnv):
    """Guess the Number with a task set of ranges."""

    task_set: ClassVar[TaskSet] = StaticTaskSet(
        {
            "train": [{"id": f"easy-{i}", "reset": {"low": 1, "high": 4 + i}} for i in range(25)],
            "test": [{"id": "hard", "reset": {"low": 1, "high": 10_000}}],
        }
    )

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Any:
        return super().reset(seed, episode_id, **self.task_set.resolve_reset(kwargs))


class Broken(TaskSet):
    def list_splits(self) -> list[Split]:
        return [Split(name="x")]

    def num_tasks(self, split: str) -> int:
        return 3

    def load_task(self, split: str, index: int) -> Task:
        raise RuntimeError("disk on fire")


class BrokenEnv(GuessEnv):
    task_set: ClassVar[TaskSet] = Broken()


def test_routes_read_the_set(make_client: ClientFactory) -> None:
    http = make_client(TaskGuess)
    assert http.get("/tasks").json() == {
        "splits": [
            {"name": "train", "type": "train", "num_tasks": 25},
            {"name": "test", "type": "test", "num_tasks": 1},
        ]
    }
    page = http.get("/tasks/train", params={"start": 20, "stop": 99}).json()
    assert (page["num_tasks"], page["start"], page["stop"]) == (25, 20, 25)
    assert [t["id"] for t in page["tasks"]] == [f"easy-{i}" for i in range(20, 25)]
    assert len(http.get("/tasks/train").json()["tasks"]) == 25
    assert http.get("/tasks/train/count").json() == {"split": "train", "num_tasks": 25}
    assert http.get("/tasks/test/0").json()["task"]["reset"] == {"low": 1, "high": 10_000}
    assert http.get("/tasks", params={"id": "easy-3"}).json()["task"]["index"] == 3


@pytest.mark.parametrize(
    ("path", "params", "status", "field"),
    [
        ("/tasks/nope", None, 404, "split"),
        ("/tasks/nope/count", None, 404, "split"),
        ("/tasks/nope/0", None, 404, "split"),
        ("/tasks/train/25", None, 404, "index"),
        ("/tasks/train/-1", None, 404, "index"),
        ("/tasks/train/99999999999999999999999", None, 404, "index"),
        ("/tasks/train/1.5", None, 422, "index"),
        ("/tasks/train/%20", None, 422, "index"),
        ("/tasks/train/x", None, 422, "index"),
        ("/tasks/train", {"start": "a"}, 422, "start"),
        ("/tasks/train", {"stop": ""}, 422, "stop"),
        ("/tasks/train", {"start": 5, "stop": 2}, 422, "start"),
        ("/tasks/train", {"start": -3}, 422, "start"),
        ("/tasks", {"id": "nope"}, 404, "task_id"),
        ("/tasks", {"id": ""}, 404, "task_id"),
        ("/tasks/%00%ff", None, 404, "split"),
    ],
)
def test_bad_requests_are_structured(
    make_client: ClientFactory, path: str, params: Any, status: int, field: str
) -> None:
    response = make_client(TaskGuess).get(path, params=params)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR" and error["message"]
    assert field in [e["field"] for e in error["errors"]]


def test_listing_is_bounded(make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpgym.servers.sim import tasks as routes_tasks

    monkeypatch.setattr(routes_tasks, "MAX_TASKS_PER_REPLY", 10)
    http = make_client(TaskGuess)
    response = http.get("/tasks/train")
    assert response.status_code == 422 and "start=&stop=" in response.json()["error"]["message"]
    assert len(http.get("/tasks/train", params={"start": 10, "stop": 20}).json()["tasks"]) == 10


def test_no_task_set_means_no_splits(make_client: ClientFactory) -> None:
    http = make_client(GuessEnv)
    assert http.get("/tasks").json() == {"splits": []}
    assert http.get("/tasks/train/0").status_code == 404


def test_a_broken_set_is_an_execution_error(make_client: ClientFactory) -> None:
    response = make_client(BrokenEnv).get("/tasks/x/1")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "EXECUTION_ERROR"
    assert "disk on fire" in response.json()["error"]["message"]


def test_production_mode_has_no_task_routes(make_client: ClientFactory) -> None:
    assert make_client(TaskGuess, mode="production").get("/tasks").status_code == 404


def test_http_base() -> None:
    assert http_base("http://h:1") == "http://h:1"
    assert http_base("wss://h/a/ws") == "https://h/a"
    assert http_base("h:2/") == "http://h:2"


@pytest.mark.server
def test_sync_client_reads_tasks_and_resets_by_id() -> None:
    with run_server(create_app(CalendarEnv)) as server, SyncEnvClient(server.url) as env:
        assert env.list_splits() == [Split(name=f"v{n}", type="test") for n in (1, 2, 3)]
        count = env.num_tasks("v1")
        assert count == CALENDAR_TASKS.num_tasks("v1")
        assert env.list_tasks("v1") == CALENDAR_TASKS.list_tasks("v1")
        assert env.get_task("v1", 4) == CALENDAR_TASKS.get_task("v1", 4)
        tail = env.get_task_range("v1", count - 2, count + 5)
        assert tail == CALENDAR_TASKS.list_tasks("v1")[-2:]
        task = env.get_task("v1", 9)
        assert env.find_task(task["id"]) == task
        first = env.reset(task_id=task["id"])
        assert env.state().task == task["task"]  # the operator's view; never the observation's
        again = env.reset(split="v1", index=9)
        assert again.observation.metadata == first.observation.metadata
        with pytest.raises(RemoteError) as info:
            env.reset(task_id="t0-missing")
        assert info.value.remote_code == "VALIDATION_ERROR"
        with pytest.raises(RemoteError) as info:
            env.get_task("v1", count)
        assert info.value.detail["status"] == 404
        assert info.value.detail["errors"][0]["field"] == "index"
        remote = RemoteTaskSet(server.url)
        assert remote.resolve_reset({"task_id": task["id"]}) == task["reset"]


@pytest.mark.server
async def test_async_client_reads_tasks() -> None:
    with run_server(create_app(TaskGuess)) as server:
        async with EnvClient(server.url) as env:
            assert [s.name for s in await env.list_splits()] == ["train", "test"]
            assert await env.num_tasks("train") == 25
            assert (await env.get_task("test", 0))["id"] == "hard"
            assert len(await env.get_task_range("train", 0, 3)) == 3
            assert len(await env.list_tasks("train")) == 25
            assert (await env.find_task("easy-2"))["reset"] == {"low": 1, "high": 6}
            await env.reset(task_id="easy-0", seed=1)
            state = await env.state()
            assert (state.model_extra or {})["high"] == 4
            with pytest.raises(RemoteError):
                await env.num_tasks("nope")


def test_unreachable_server() -> None:
    with pytest.raises(ServerGone):
        SyncEnvClient("http://127.0.0.1:9").list_splits()
