"""Task sets: the episodes an environment can run, in named splits, addressable by index or id.

The shape follows the Open Reward Standard's task API, so trainers and evaluators enumerate tasks
without starting an episode and pick the one each episode plays:

    list_splits()                        [Split(name="train", type="train"), ...]
    list_tasks(split) / num_tasks(split) every task of a split / how many
    get_task(split, index)               one task, a JSON object
    get_task_range(split, start, stop)   tasks[start:stop] (ranges partition work across workers)

A task is a JSON object with at least `id`, `split` and `index`; its `reset` member holds the
reset options that play it (Calendar Gym: `{"task": "t1-create-haircut"}`). Selecting a task is
still `reset`: `reset(task_id="...")` or `reset(split="test", index=12)`.

An environment declares its task set with the class attribute `task_set` (a `TaskSet`);
its `reset` calls `task_set.resolve_reset(kwargs)` to turn `task_id` / `split` + `index` into
the task's options. Servers expose the set on `/tasks` (simulation mode), the clients read it
(`SyncEnvClient.list_splits()`, ...), and `from_dataset` makes one from a Hugging Face
`datasets` dataset (a local file or folder, or a hub id where the hub is reachable).

Example:
    >>> tasks = StaticTaskSet({"train": [{"id": "a", "reset": {"low": 1, "high": 9}}],
    ...                        "test": [{"id": "b", "reset": {"low": 1, "high": 99}}]})
    >>> [s.name for s in tasks.list_splits()], tasks.num_tasks("test")
    (['train', 'test'], 1)
    >>> tasks.get_task("test", 0)
    {'id': 'b', 'reset': {'low': 1, 'high': 99}, 'split': 'test', 'index': 0}
    >>> tasks.resolve_reset({"task_id": "a", "seed": 3})
    {'seed': 3, 'low': 1, 'high': 9}
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from mcpgym._hints import jsonable
from mcpgym.errors import InvalidRequest

__all__ = [
    "TASK_KEYS",
    "Split",
    "SplitType",
    "StaticTaskSet",
    "Task",
    "TaskNotFound",
    "TaskSet",
    "task_set_of",
]

SplitType = Literal["train", "validation", "test"]
Task = dict[str, Any]
"""One task: a JSON object with `id`, `split`, `index` and, usually, `reset` options."""

TASK_KEYS = ("task_id", "split", "index")
"""Reset options that select a task (`resolve_reset` replaces them with the task's options)."""


class TaskNotFound(InvalidRequest):
    """No such split, index or task id (HTTP 404); `field`, `got` and `expected` say which."""

    http_status = 404


class Split(BaseModel):
    """One split of a task set: its name and what it is for."""

    name: str
    type: SplitType = "test"


def _split_type(name: str) -> SplitType:
    low = name.lower()
    if low.startswith("train"):
        return "train"
    if low.startswith(("val", "dev")):
        return "validation"
    return "test"


def _index(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)  # query strings and dataset columns carry numbers as text
        raise InvalidRequest(
            f"{field} must be an integer, not {value!r}",
            errors=[{"field": field, "got": jsonable(value), "message": "not an integer"}],
        )
    return value


class TaskSet:
    """Base class of task sets: implement `list_splits` and `list_tasks` (or `num_tasks` and
    `load_task` for sets too big to list); everything else has a default built on them.

    Unknown splits, out-of-range indexes and unknown ids raise `TaskNotFound`, bad argument types
    `InvalidRequest`: servers turn both into structured error replies.
    """

    def list_splits(self) -> list[Split]:
        """The splits, in a stable order."""
        raise NotImplementedError(f"{type(self).__name__} must implement list_splits()")

    def list_tasks(self, split: str) -> list[Task]:
        """Every task of `split`, in index order."""
        return [self.load_task(split, i) for i in range(self.num_tasks(split))]

    def num_tasks(self, split: str) -> int:
        """How many tasks `split` has."""
        if type(self).list_tasks is TaskSet.list_tasks:
            raise NotImplementedError(f"{type(self).__name__} must implement list_tasks()")
        return len(self.list_tasks(self.check_split(split)))

    def get_task(self, split: str, index: int) -> Task:
        """Task `index` of `split`."""
        self.check_split(split)
        index = _index(index, "index")
        count = self.num_tasks(split)
        if not 0 <= index < count:
            raise TaskNotFound(
                f"split {split!r} has {count} tasks; index {index} is out of range",
                errors=[{"field": "index", "got": index, "expected": f"0 <= index < {count}"}],
            )
        return self.load_task(split, index)

    def get_task_range(self, split: str, start: int, stop: int) -> list[Task]:
        """Tasks `start` to `stop - 1` of `split`; `stop` past the end is clipped (a slice)."""
        self.check_split(split)
        start, stop = _index(start, "start"), _index(stop, "stop")
        if start < 0 or stop < start:
            raise InvalidRequest(
                f"need 0 <= start <= stop, got start={start} stop={stop}",
                errors=[{"field": "start", "got": start}, {"field": "stop", "got": stop}],
            )
        stop = min(stop, self.num_tasks(split))
        return [self.load_task(split, i) for i in range(start, stop)]

    def find_task(self, task_id: str) -> Task:
        """The task whose `id` is `task_id`, in any split."""
        ids = self._ids()
        found = ids.get(str(task_id))
        if found is None:
            near = difflib.get_close_matches(str(task_id), list(ids), n=3)
            raise TaskNotFound(
                f"no task {task_id!r}" + (f"; did you mean {', '.join(near)}?" if near else ""),
                errors=[{"field": "task_id", "got": jsonable(task_id), "suggestions": near}],
            )
        return self.load_task(*found)

    def reset_options(self, task: Mapping[str, Any]) -> dict[str, Any]:
        """The reset options that play `task` (default: its `reset` member)."""
        options = task.get("reset")
        return dict(options) if isinstance(options, Mapping) else {}

    def resolve_reset(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """`options` with `task_id`, or `split` and `index`, replaced by the task's options.

        Options given beside the selector (a `seed`) are kept; the task's own win over them only
        where both name the same key. Without a selector `options` come back unchanged.
        """
        rest = {k: v for k, v in options.items() if k not in TASK_KEYS}
        task = self.select(options)
        return rest if task is None else {**rest, **self.reset_options(task)}

    def select(self, options: Mapping[str, Any]) -> Task | None:
        """The task the reset `options` select (`task_id`, or `split` + `index`), else None."""
        task_id = options.get("task_id")
        has_split, has_index = "split" in options, "index" in options
        if task_id is not None:
            if has_split or has_index:
                raise InvalidRequest(
                    "select a task by task_id or by split and index, not both",
                    errors=[{"field": "task_id"}, {"field": "split"}, {"field": "index"}],
                )
            return self.find_task(str(task_id))
        if has_split != has_index:
            missing = "index" if has_split else "split"
            raise InvalidRequest(
                f"a task is selected by split and index together; {missing} is missing",
                errors=[{"field": missing, "message": "Field required"}],
            )
        if has_split:
            return self.get_task(str(options["split"]), options["index"])
        return None

    def check_split(self, split: str) -> str:
        """`split` if it exists; `TaskNotFound` naming the splits that do otherwise."""
        names = [s.name for s in self.list_splits()]
        if split not in names:
            raise TaskNotFound(
                f"no split {split!r}; splits: {', '.join(names) or '(none)'}",
                errors=[{"field": "split", "got": jsonable(split), "expected": names}],
            )
        return split

    # -- helpers for subclasses ------------------------------------------------------------------

    def load_task(self, split: str, index: int) -> Task:
        """Task `index` of `split`, unchecked (override with `num_tasks` for sets too big to
        list; the default indexes `list_tasks`)."""
        if type(self).list_tasks is TaskSet.list_tasks:
            raise NotImplementedError(f"{type(self).__name__} must implement list_tasks()")
        return self.list_tasks(split)[index]

    def _ids(self) -> dict[str, tuple[str, int]]:
        cached: dict[str, tuple[str, int]] | None = self.__dict__.get("_id_index")
        if cached is None:
            cached = {}
            for split in self.list_splits():
                for i, task in enumerate(self.list_tasks(split.name)):
                    cached.setdefault(str(task.get("id")), (split.name, i))
            self.__dict__["_id_index"] = cached
        return cached


class StaticTaskSet(TaskSet):
    """A task set held in memory: `{split: [task, ...]}`.

    Each task gets `split` and `index`; a task without `id` gets `"<split>-<index>"`. Split types
    come from `types` or from the name (`train*`, `val*`/`dev*`, else `test`).
    """

    def __init__(
        self,
        splits: Mapping[str, Sequence[Mapping[str, Any]]],
        types: Mapping[str, SplitType] | None = None,
    ) -> None:
        self._splits: dict[str, list[Task]] = {}
        for name, rows in splits.items():
            tasks: list[Task] = []
            for i, row in enumerate(rows):
                task = dict(row)
                task.setdefault("id", f"{name}-{i}")
                task["split"], task["index"] = name, i
                tasks.append(task)
            self._splits[str(name)] = tasks
        self._types: dict[str, SplitType] = dict(types or {})

    def list_splits(self) -> list[Split]:
        return [Split(name=n, type=self._types.get(n, _split_type(n))) for n in self._splits]

    def list_tasks(self, split: str) -> list[Task]:
        return copy.deepcopy(self._splits[self.check_split(split)])

    def num_tasks(self, split: str) -> int:
        return len(self._splits[self.check_split(split)])

    def load_task(self, split: str, index: int) -> Task:
        return copy.deepcopy(self._splits[split][index])


def task_set_of(env: Any) -> TaskSet | None:
    """The task set an environment (instance or class) declares as `task_set`, if any."""
    found = getattr(env, "task_set", None)
    return found if isinstance(found, TaskSet) else None
