"""The task-set example of docs/training.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "training.md"


def test_task_set_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    (block,) = [b for b in blocks if "CALENDAR_TASKS as tasks" in b]
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/training.md", "exec"), namespace)
    tasks = namespace["tasks"]
    assert tasks.num_tasks("v1") == len(tasks.list_tasks("v1")) > 0  # type: ignore[attr-defined]
