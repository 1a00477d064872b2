"""HumanEval from the wheel, the repository tier, the task set: no hidden data in the open."""

from __future__ import annotations

import json

import pytest

from code_gym.checks import judge
from code_gym.grading import baseline_steps, local_answers, score
from code_gym.humaneval import problems, visible_examples
from code_gym.tasks import all_tasks, get_task, humaneval_ids, repo_ids
from code_gym.taskset import CODE_TASKS
from mcpgym.tasks import TaskNotFound


def test_all_164_problems_come_from_the_wheel() -> None:
    assert len(problems()) == 164
    assert humaneval_ids()[0] == "HumanEval/0" and humaneval_ids()[-1] == "HumanEval/163"
    assert len(repo_ids()) >= 3


def test_visible_examples_are_parsed_and_pass_the_reference() -> None:
    counted = [len(visible_examples(p)) for p in problems().values()]
    assert sum(counted) > 300 and sum(1 for n in counted if n) > 120


@pytest.mark.parametrize("task", all_tasks(), ids=lambda t: t.id)
def test_reference_earns_full_marks_and_the_start_earns_nothing(task) -> None:
    """On the host (no sandbox): the reference's own answers judge to 1.0, the starting files'
    to 0.0 (the fix tests are the ones the start fails)."""
    rec = task.recording()
    assert rec.tests > 0
    good = score(task, judge(rec, local_answers(rec, task.reference()), seed=task.id))
    assert good.reward == 1.0 and good.binary == 1.0
    start = score(task, judge(rec, local_answers(rec, task.baseline()), seed=task.id))
    assert start.reward == 0.0 and start.fix_total > 0


def test_regression_tests_are_what_the_start_already_passes() -> None:
    task = get_task("repo/shapes-refactor")
    assert len(baseline_steps(task)) >= 4  # the old functions work before the refactor


def test_hidden_tests_and_solutions_stay_out_of_the_workspace_and_task_rows() -> None:
    for task in all_tasks():
        workspace = json.dumps(task.files)
        for line in task.hidden.splitlines():
            line = line.strip()
            if line.startswith("assert") and len(line) > 25:
                assert line not in workspace, (task.id, line)
        solution = task.solution.get("solution.py")
        if solution is not None:
            body = solution[len(task.files["solution.py"]) :].strip()
            assert body and body not in workspace
    for split in CODE_TASKS.list_splits():
        for row in CODE_TASKS.list_tasks(split.name):
            task = get_task(row["id"])
            text = json.dumps(row)
            assert set(row) == {
                "id",
                "split",
                "index",
                "kind",
                "title",
                "entry_point",
                "prompt",
                "max_steps",
                "reset",
            }
            asserts = [ln.strip() for ln in task.hidden.splitlines() if "assert cand" in ln]
            assert not any(a in text for a in asserts if len(a) > 25)


def test_task_set_splits_select_and_errors() -> None:
    assert [s.name for s in CODE_TASKS.list_splits()] == ["humaneval", "repo"]
    assert CODE_TASKS.get_task("repo", 0)["reset"] == {"task": repo_ids()[0]}
    assert CODE_TASKS.resolve_reset({"split": "humaneval", "index": 7}) == {"task": "HumanEval/7"}
    with pytest.raises(TaskNotFound):
        CODE_TASKS.find_task("HumanEval/999")
    with pytest.raises(TaskNotFound):
        CODE_TASKS.get_task("humaneval", 164)


def test_submitted_files_exclude_tests() -> None:
    task = get_task("repo/wordstats-fix-suite")
    files = {**task.files, "tests/test_core.py": "x", "wordstats/extra.py": "y", "notes.txt": "z"}
    assert sorted(task.submitted(files)) == [
        "wordstats/__init__.py",
        "wordstats/core.py",
        "wordstats/extra.py",
    ]
    assert get_task("HumanEval/1").submitted({"solution.py": "a", "test_solution.py": "b"}) == {
        "solution.py": "a"
    }
