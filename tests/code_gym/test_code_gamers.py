"""Constant answers score 0.0 on every task, judged on the host (no sandbox needed).

The sandboxed gamers (test_gamers_code.py) play a sample; here every task meets the answers a
constant-returning or `pass`-body submission gives, including where the constant is right for
some hidden tests (`candidate([]) is None`, `True == 1`).
"""

from __future__ import annotations

from typing import Any

import pytest

from code_gym.checks import judge
from code_gym.grading import local_answers, score
from code_gym.tasks import all_tasks

CONSTANTS: list[Any] = [None, True, False, 0, 1, -1, "", "a", [], (), {}, 0.0, [0], "PASSED"]


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.id)
def test_constant_answers_score_zero(task) -> None:  # type: ignore[no-untyped-def]
    rec = task.recording()
    for value in CONSTANTS:
        functions = {target: (lambda *a, _v=value, **k: _v) for target, _, _ in rec.calls}
        grade = score(task, judge(rec, local_answers(rec, functions), seed=task.id))
        assert grade.reward == 0.0, (task.id, value, grade)


ALL_SHOWN = {"HumanEval/34"}  # its only hidden test is its docstring's example


@pytest.mark.parametrize(
    "task", [t for t in all_tasks() if t.kind == "humaneval"], ids=lambda t: t.id
)
def test_hard_coding_the_visible_examples_scores_zero(task) -> None:  # type: ignore[no-untyped-def]
    """The gamer's file answers the shown examples from a table; the hidden tests that repeat
    them are required but not credited. Run here on the host (it is our own code)."""
    from code_gym.agents.gamers import GAMERS

    _, files = GAMERS["hardcode_visible"](task)
    namespace: dict[str, Any] = {}
    exec(files["solution.py"], namespace)
    fn = namespace[task.candidate.partition(":")[2]]
    rec = task.recording()
    grade = score(task, judge(rec, local_answers(rec, {task.candidate: fn}), seed=task.id))
    assert grade.reward == (1.0 if task.id in ALL_SHOWN else 0.0), (task.id, grade)


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.id)
def test_handing_an_argument_back_scores_zero(task) -> None:  # type: ignore[no-untyped-def]
    rec = task.recording()
    for position in (0, 1):

        def echo(*args: Any, _p: int = position, **kwargs: Any) -> Any:
            return args[_p] if len(args) > _p else None

        functions = {target: echo for target, _, _ in rec.calls}
        grade = score(task, judge(rec, local_answers(rec, functions), seed=task.id))
        assert grade.reward == 0.0, (task.id, position, grade)
