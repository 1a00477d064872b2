"""Task sets (`mcpgym.tasks`): the episodes an environment can run, by split, index and id.

See `mcpgym.tasks.base` for the protocol and `from_dataset` for task sets read with Hugging Face
`datasets`; docs/training.md shows them driving a trainer.

Example:
    >>> from mcpgym.tasks import StaticTaskSet
    >>> StaticTaskSet({"test": [{"id": "t0"}]}).get_task_range("test", 0, 10)
    [{'id': 't0', 'split': 'test', 'index': 0}]
"""

from mcpgym.tasks.base import (
    TASK_KEYS,
    Split,
    SplitType,
    StaticTaskSet,
    Task,
    TaskNotFound,
    TaskSet,
    task_set_of,
)
from mcpgym.tasks.dataset import from_dataset

__all__ = [
    "TASK_KEYS",
    "Split",
    "SplitType",
    "StaticTaskSet",
    "Task",
    "TaskNotFound",
    "TaskSet",
    "from_dataset",
    "task_set_of",
]
