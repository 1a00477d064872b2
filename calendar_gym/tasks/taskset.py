"""Calendar Gym's task suite as an `mcpgym.tasks` task set (`CalendarEnv.task_set`).

One split per suite version (`v1`, type `test`); in it one task per suite task and phrasing, in
suite order, explicit first: id `"<task>/<phrasing>"`, the prompt the benchmark gives for that
phrasing, the task's tier, kind, title, acting user and step limit, and the reset options that
play it (`{"task": ..., "suite": ...}`). A bare suite id (`t1-create-haircut`) finds its explicit
phrasing. The expected finish status is not in the task: it is the answer to trap tasks.

Example:
    >>> task = CALENDAR_TASKS.find_task("t1-create-haircut/natural")
    >>> task["split"], task["reset"], task["tier"]
    ('v1', {'task': 't1-create-haircut', 'suite': '1'}, 'T1')
    >>> CALENDAR_TASKS.resolve_reset({"task_id": "t1-create-haircut"})
    {'task': 't1-create-haircut', 'suite': '1'}
"""

from __future__ import annotations

import copy
import functools
import re
from importlib import resources

from calendar_gym.tasks.loader import load_suite
from calendar_gym.tasks.model import Phrasing
from calendar_gym.tasks.prompt import prompt
from mcpgym.tasks import Split, Task, TaskSet

__all__ = ["CALENDAR_TASKS", "CalendarTaskSet"]

_PHRASINGS: tuple[Phrasing, ...] = ("explicit", "natural")


@functools.cache
def _versions() -> tuple[str, ...]:
    folder = resources.files("calendar_gym.tasks")
    found = [m[1] for f in folder.iterdir() if (m := re.fullmatch(r"v(\d+)", f.name))]
    return tuple(sorted(found, key=int))


class CalendarTaskSet(TaskSet):
    """The suite versions as splits (see the module docstring)."""

    def list_splits(self) -> list[Split]:
        return [Split(name=f"v{v}", type="test") for v in _versions()]

    def num_tasks(self, split: str) -> int:
        return len(self._rows(self.check_split(split)))

    def list_tasks(self, split: str) -> list[Task]:
        return copy.deepcopy(list(self._rows(self.check_split(split))))

    def load_task(self, split: str, index: int) -> Task:
        return copy.deepcopy(self._rows(split)[index])

    def find_task(self, task_id: str) -> Task:
        text = str(task_id)
        if "/" not in text and self._ids().get(f"{text}/explicit") is not None:
            text += "/explicit"
        return super().find_task(text)

    @staticmethod
    @functools.cache
    def _rows(split: str) -> tuple[Task, ...]:

        version = split.removeprefix("v")
        rows: list[Task] = []
        for task in load_suite(version):
            for phrasing in _PHRASINGS:
                rows.append(
                    {
                        "id": f"{task.id}/{phrasing}",
                        "split": split,
                        "index": len(rows),
                        "task": task.id,
                        "phrasing": phrasing,
                        "tier": task.tier,
                        "kind": task.kind,
                        "title": task.title,
                        "user": task.user,
                        "max_steps": task.max_steps,
                        "prompt": prompt(task, phrasing),
                        "reset": {"task": task.id, "suite": version},
                    }
                )
        return tuple(rows)


CALENDAR_TASKS = CalendarTaskSet()
"""The task set `CalendarEnv` declares."""
