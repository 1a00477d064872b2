"""The examples in Code Gym's docstrings run (the sandbox's ones in the `code` suite)."""

from __future__ import annotations

import doctest
import importlib

import pytest

PURE = [
    "code_gym.checks",
    "code_gym.errors",
    "code_gym.grading",
    "code_gym.humaneval",
    "code_gym.outcomes",
    "code_gym.runner.wire",
    "code_gym.suite",
    "code_gym.tasks",
    "code_gym.taskset",
    "code_gym.agents.gamers",
    "code_gym.agents.script",
]
SANDBOXED = ["code_gym", "code_gym.env", "code_gym.agents.reference"]


def _run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


@pytest.mark.parametrize("name", PURE)
def test_pure_examples(name: str) -> None:
    _run(name)


@pytest.mark.code
@pytest.mark.parametrize("name", SANDBOXED)
def test_sandboxed_examples(name: str) -> None:
    _run(name)
