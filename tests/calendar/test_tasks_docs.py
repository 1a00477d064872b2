"""The benchmark's documentation runs: the examples in docs/calendar_benchmark.md, and the
docstring examples of the task and agent subpackages (the top-level modules' are run by
test_calendar_world.py)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import calendar_gym.agents
import calendar_gym.tasks
from calendar_gym.tasks import load_suite

DOC = Path(__file__).resolve().parents[2] / "docs" / "calendar_benchmark.md"
MODULES = sorted(
    name
    for pkg in (calendar_gym.tasks, calendar_gym.agents)
    for name in [pkg.__name__, *(m.name for m in pkgutil.iter_modules(pkg.__path__,
                                                                      pkg.__name__ + "."))]
)  # fmt: skip


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    mod = importlib.import_module(module)
    assert mod.__doc__, f"{module} has no docstring"
    assert doctest.testmod(mod, optionflags=doctest.ELLIPSIS).failed == 0


def test_doc_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
    assert "It is Wednesday, March 4, 2026" in capsys.readouterr().out


def test_doc_tier_table_matches_the_suite() -> None:
    text = DOC.read_text(encoding="utf-8")
    for tier, tasks in load_suite().by_tier().items():
        assert f"| {tier} | {len(tasks)} |" in text, tier
    assert f"{len(load_suite())} Calendar Gym tasks" in text
