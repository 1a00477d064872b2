"""The task-set protocol (`mcpgym.tasks`): defaults, selection for reset, and every bad input."""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.tasks.taskset import CALENDAR_TASKS
from mcpgym.errors import InvalidRequest
from mcpgym.tasks import Split, StaticTaskSet, Task, TaskNotFound, TaskSet, task_set_of

ROWS = {
    "train": [{"id": "a", "reset": {"low": 1, "high": 9}}, {"reset": {"low": 5, "high": 6}}],
    "test": [{"id": "z", "reset": {"low": 1, "high": 99}, "prompt": "Guess."}],
}


class Counted(TaskSet):
    """A set too big to list: only `num_tasks` and `load_task`."""

    def __init__(self) -> None:
        self.loaded: list[int] = []

    def list_splits(self) -> list[Split]:
        return [Split(name="big", type="train")]

    def num_tasks(self, split: str) -> int:
        self.check_split(split)
        return 1_000_000

    def load_task(self, split: str, index: int) -> Task:
        self.loaded.append(index)
        return {"id": f"big-{index}", "split": split, "index": index, "reset": {"n": index}}


def test_static_set_reads() -> None:
    tasks = StaticTaskSet(ROWS)
    assert [(s.name, s.type) for s in tasks.list_splits()] == [("train", "train"), ("test", "test")]
    assert tasks.num_tasks("train") == 2
    assert tasks.get_task("train", 1) == {
        "id": "train-1", "reset": {"low": 5, "high": 6}, "split": "train", "index": 1,
    }  # fmt: skip
    assert [t["id"] for t in tasks.list_tasks("train")] == ["a", "train-1"]
    assert tasks.get_task_range("train", 1, 50) == [tasks.get_task("train", 1)]
    assert tasks.get_task_range("train", 2, 2) == []
    assert tasks.find_task("z")["prompt"] == "Guess."


def test_tasks_are_copies() -> None:
    tasks = StaticTaskSet(ROWS)
    tasks.get_task("train", 0)["reset"]["low"] = 1000
    tasks.list_tasks("train")[0]["reset"]["high"] = -1
    assert tasks.get_task("train", 0)["reset"] == {"low": 1, "high": 9}


def test_resolve_reset() -> None:
    tasks = StaticTaskSet(ROWS)
    assert tasks.resolve_reset({"task_id": "a", "seed": 4}) == {"seed": 4, "low": 1, "high": 9}
    assert tasks.resolve_reset({"split": "test", "index": 0}) == {"low": 1, "high": 99}
    assert tasks.resolve_reset({"split": "test", "index": "0"}) == {"low": 1, "high": 99}
    assert tasks.resolve_reset({"seed": 1, "low": 3}) == {"seed": 1, "low": 3}
    # the task's options win over the same key given beside the selector
    assert tasks.resolve_reset({"task_id": "a", "low": 7})["low"] == 1


@pytest.mark.parametrize(
    ("options", "error", "field"),
    [
        ({"task_id": "nope"}, TaskNotFound, "task_id"),
        ({"task_id": ""}, TaskNotFound, "task_id"),
        ({"split": "nope", "index": 0}, TaskNotFound, "split"),
        ({"split": "train", "index": 2}, TaskNotFound, "index"),
        ({"split": "train", "index": -1}, TaskNotFound, "index"),
        ({"split": "train", "index": 10**30}, TaskNotFound, "index"),
        ({"split": "train", "index": "one"}, InvalidRequest, "index"),
        ({"split": "train", "index": 1.5}, InvalidRequest, "index"),
        ({"split": "train", "index": True}, InvalidRequest, "index"),
        ({"split": "train", "index": None}, InvalidRequest, "index"),
        ({"split": "train", "index": [0]}, InvalidRequest, "index"),
        ({"split": ["train"], "index": 0}, TaskNotFound, "split"),
        ({"split": "train"}, InvalidRequest, "index"),
        ({"index": 0}, InvalidRequest, "split"),
        ({"task_id": "a", "split": "train", "index": 0}, InvalidRequest, "task_id"),
    ],
)
def test_bad_selection(options: dict[str, Any], error: type[Exception], field: str) -> None:
    with pytest.raises(error) as info:
        StaticTaskSet(ROWS).resolve_reset(options)
    err = info.value
    assert isinstance(err, InvalidRequest)
    assert err.to_dict()["code"] == "VALIDATION_ERROR"
    assert field in [e["field"] for e in err.detail["errors"]]
    assert err.http_status == (404 if error is TaskNotFound else 422)


@pytest.mark.parametrize(("start", "stop"), [(-1, 2), (2, 1), ("x", 2), (0, None), (0.5, 1)])
def test_bad_ranges(start: Any, stop: Any) -> None:
    with pytest.raises(InvalidRequest):
        StaticTaskSet(ROWS).get_task_range("train", start, stop)


def test_near_ids_are_suggested() -> None:
    with pytest.raises(TaskNotFound) as info:
        CALENDAR_TASKS.find_task("t1-create-haircut/natrual")
    assert "t1-create-haircut/natural" in info.value.detail["errors"][0]["suggestions"]


def test_unlisted_set_reads_only_what_is_asked() -> None:
    tasks = Counted()
    assert tasks.get_task_range("big", 10, 13)[0]["reset"] == {"n": 10}
    assert tasks.resolve_reset({"split": "big", "index": 999_999}) == {"n": 999_999}
    assert tasks.loaded == [10, 11, 12, 999_999]
    with pytest.raises(TaskNotFound):
        tasks.get_task("big", 1_000_000)


def test_a_set_without_list_tasks_says_what_to_implement() -> None:
    class Empty(TaskSet):
        def list_splits(self) -> list[Split]:
            return [Split(name="x")]

    with pytest.raises(NotImplementedError, match="list_tasks"):
        Empty().num_tasks("x")


def test_calendar_declares_its_suite() -> None:
    assert task_set_of(CalendarEnv) is CALENDAR_TASKS
    assert task_set_of(CalendarEnv()) is CALENDAR_TASKS
    assert task_set_of(object()) is None
    splits = CALENDAR_TASKS.list_splits()
    assert [s.name for s in splits] == ["v1", "v2", "v3"]  # one split per suite version
    for split in splits:
        tasks = CALENDAR_TASKS.list_tasks(split.name)
        assert len(tasks) == CALENDAR_TASKS.num_tasks(split.name) >= 96
        assert len({t["id"] for t in tasks}) == len(tasks)
        assert [t["index"] for t in tasks] == list(range(len(tasks)))
        version = split.name.removeprefix("v")
        for task in tasks:
            assert task["prompt"] and task["reset"] == {"task": task["task"], "suite": version}
            assert "finish" not in task  # the expected outcome is the answer to trap tasks


def test_calendar_reset_by_task_id_and_index() -> None:
    env = CalendarEnv()
    task = CALENDAR_TASKS.get_task("v1", 7)
    by_id = env.reset(task_id=task["id"], seed=3).metadata
    assert env.state.task == task["task"] and env.state.seed == 3
    by_index = env.reset(split="v1", index=7).metadata
    assert by_index == by_id
    env.reset(task_id=task["task"])  # bare suite id
    assert env.state.task == task["task"]
    with pytest.raises(TaskNotFound):
        env.reset(task_id="t9-nothing")
    with pytest.raises(InvalidRequest, match="cannot be combined"):
        env.reset(task_id=task["id"], user="bob@acme.test")
