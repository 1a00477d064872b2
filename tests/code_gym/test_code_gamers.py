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


def _near(answer: Any, odd: int) -> Any:
    """A function that answers `answer`'s value for every call but the `odd`-th, which gets a
    junk string: two distinct values, so the one-constant guard alone does not see it."""
    calls = [0]

    def fn(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return "junk" if calls[0] == odd else answer(*args)

    return fn


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.id)
def test_a_constant_for_all_calls_but_one_scores_zero(task) -> None:  # type: ignore[no-untyped-def]
    """A gamer that found the constant guard (2026-12-03): the first call answers junk, every
    other the constant (58 of 164 HumanEval tasks scored above 0, up to 0.57). Credit now starts
    above what the best input-blind answer passes (`grading.trivial_fix_tests`)."""
    rec = task.recording()
    for value in CONSTANTS:
        for odd in (1, 2):
            functions = {t: _near(lambda *a, _v=value: _v, odd) for t, _, _ in rec.calls}
            grade = score(task, judge(rec, local_answers(rec, functions), seed=task.id))
            assert grade.reward == 0.0, (task.id, value, odd, grade)
    for position in (0, 1):
        echo = _near(lambda *a, _p=position: a[_p] if len(a) > _p else None, 1)
        functions = {t: echo for t, _, _ in rec.calls}
        grade = score(task, judge(rec, local_answers(rec, functions), seed=task.id))
        assert grade.reward == 0.0, (task.id, "echo", position, grade)
