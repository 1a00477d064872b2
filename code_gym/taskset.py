"""Code Gym's tasks as an mcpgym task set: splits `humaneval` (164) and `repo` (in-house).

Each task is `{"id", "split", "index", "kind", "title", "entry_point", "prompt", "reset":
{"task": id}}`: what a trainer needs to pick and show a task; never the hidden tests or the
reference solution. `reset(task_id="HumanEval/3")` or `reset(split="repo", index=0)` plays one.

Example:
    >>> [(s.name, CODE_TASKS.num_tasks(s.name)) for s in CODE_TASKS.list_splits()]
    [('humaneval', 164), ('repo', 3)]
    >>> CODE_TASKS.resolve_reset({"task_id": "HumanEval/3"})
    {'task': 'HumanEval/3'}
"""

from __future__ import annotations

from typing import Any

from code_gym.tasks import CodeTask, get_task, humaneval_ids, repo_ids
from mcpgym.tasks import Split, Task, TaskSet

__all__ = ["CODE_TASKS", "CodeTaskSet", "prompt"]


def prompt(task: CodeTask) -> str:
    """The instruction an agent gets for `task` (the files are in its workspace)."""
    head = task.files.get("solution.py", "") if task.kind == "humaneval" else ""
    body = f"\n\nsolution.py starts as:\n```python\n{head}```" if head else ""
    return f"{task.instructions}{body}"


class CodeTaskSet(TaskSet):
    """The task set (see the module docstring); tasks are built on first use."""

    def list_splits(self) -> list[Split]:
        return [Split(name="humaneval", type="test"), Split(name="repo", type="test")]

    def _split_ids(self, split: str) -> list[str]:
        return humaneval_ids() if self.check_split(split) == "humaneval" else repo_ids()

    def num_tasks(self, split: str) -> int:
        return len(self._split_ids(split))

    def load_task(self, split: str, index: int) -> Task:
        task = get_task(self._split_ids(split)[index])
        row: dict[str, Any] = {
            "id": task.id,
            "split": split,
            "index": index,
            "kind": task.kind,
            "title": task.title,
            "entry_point": task.candidate.partition(":")[2] or None,
            "prompt": prompt(task),
            "max_steps": task.max_steps,
            "reset": {"task": task.id},
        }
        return row

    def find_task(self, task_id: str) -> Task:
        for split in ("humaneval", "repo"):
            ids = self._split_ids(split)
            if task_id in ids:
                return self.load_task(split, ids.index(task_id))
        return super().find_task(task_id)  # the base class's error, with near names

    def list_tasks(self, split: str) -> list[Task]:
        return [self.load_task(split, i) for i in range(self.num_tasks(split))]


CODE_TASKS = CodeTaskSet()
"""The one task set instance (`CodeEnv.task_set`)."""
