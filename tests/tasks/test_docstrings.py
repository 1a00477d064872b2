"""The examples in the docstrings of the task and trainer-adapter modules run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "mcpgym.tasks",
    "mcpgym.tasks.base",
    "mcpgym.client._tasks",
    "mcpgym.integrations._signature",
    "mcpgym.integrations.trl",
    "calendar_gym.tasks.taskset",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
