"""Code Gym's tasks: HumanEval's 164 problems and the in-house repository tier.

A `CodeTask` is what an episode plays: the files the workspace starts with, the instructions,
which files are submitted (`submit`: paths or globs), what the hidden tests call (`candidate`:
`solution:f` for a function, a package name for a repository task), the hidden test source
(`check(candidate)`, see `code_gym.checks`) and the reference solution's files. The hidden tests
and the reference live on the host only: no tool reads them and no sandbox ever holds them.

Example:
    >>> task = get_task("HumanEval/0")
    >>> sorted(task.files), task.candidate, task.recording().tests
    (['solution.py', 'test_solution.py'], 'solution:has_close_elements', 7)
    >>> get_task("repo/wordstats-fix-suite").kind
    'repo'
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import json
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module, resources
from pathlib import Path
from typing import Any

from code_gym.checks import Recording, record
from code_gym.humaneval import problems, reference, visible_test_file
from code_gym.runner.wire import encode

__all__ = ["CodeTask", "all_tasks", "get_task", "humaneval_ids", "repo_ids"]

HUMANEVAL_STEPS = 12
_IMPORT_LOCK = threading.Lock()


@dataclass(frozen=True)
class CodeTask:
    """One task (see the module docstring)."""

    id: str
    kind: str
    title: str
    instructions: str
    files: dict[str, str]
    submit: tuple[str, ...]
    candidate: str
    hidden: str = field(repr=False)
    solution: dict[str, str] = field(repr=False)
    aliases: tuple[str, ...] = ()
    prelude: str = field(default="", repr=False)
    max_steps: int = HUMANEVAL_STEPS

    def submitted(self, files: dict[str, str]) -> dict[str, str]:
        """The workspace files that are graded (the rest, tests included, stay behind)."""
        return {
            path: text
            for path, text in files.items()
            if any(path == pat or fnmatch.fnmatchcase(path, pat) for pat in self.submit)
        }

    def submit_files(self) -> list[str]:
        """The starting files that are graded."""
        return sorted(self.submitted(self.files))

    def shown_calls(self) -> frozenset[tuple[str, str]]:
        """The calls the visible tests make with literal arguments, as (function name,
        encoded arguments): the answers the agent was shown."""
        return _shown_calls(self.id)

    def recording(self) -> Recording:
        """The hidden tests' steps and the calls they make (recorded once per process)."""
        return _recording(self.id)

    def reference(self) -> dict[str, Callable[..., Any]]:
        """The reference solution's functions by target (`module:name`)."""
        if self.kind == "humaneval":
            return {self.candidate: reference(problems()[self.id])}
        return _package_functions(self.id, True)

    def baseline(self) -> dict[str, Callable[..., Any]]:
        """The starting code's functions by target (a HumanEval stub answers None)."""
        if self.kind == "humaneval":
            return {self.candidate: _none}
        return _package_functions(self.id, False)


def _humaneval(task_id: str) -> CodeTask:
    p = problems()[task_id]
    entry = p["entry_point"]
    instructions = (
        f"Implement `{entry}` in solution.py (its signature and docstring are there). "
        "test_solution.py holds the docstring's examples; run it with run_tests and run code "
        "with run_python. Hidden tests grade the submitted solution.py when you call submit."
    )
    return CodeTask(
        id=task_id,
        kind="humaneval",
        title=entry,
        instructions=instructions,
        files={"solution.py": p["prompt"], "test_solution.py": visible_test_file(p)},
        submit=("solution.py",),
        candidate=f"solution:{entry}",
        aliases=(entry,),
        hidden=p["test"],
        prelude=p["prompt"],
        solution={"solution.py": p["prompt"] + p["canonical_solution"]},
    )


def _repo(name: str) -> CodeTask:
    data = json.loads(resources.files("code_gym.repo_tasks").joinpath(name).read_text("utf-8"))
    return CodeTask(
        id=data["id"],
        kind="repo",
        title=data["title"],
        instructions=data["instructions"],
        files=dict(data["files"]),
        submit=tuple(data["submit"]),
        candidate=data["package"],
        hidden=data["hidden"],
        solution=dict(data["solution"]),
        max_steps=int(data.get("max_steps", 20)),
    )


@functools.cache
def _repo_files() -> dict[str, str]:
    root = resources.files("code_gym.repo_tasks")
    names = sorted(p.name for p in root.iterdir() if p.name.endswith(".json"))
    out = {}
    for name in names:
        task_id = json.loads(root.joinpath(name).read_text("utf-8"))["id"]
        out[task_id] = name
    return out


def humaneval_ids() -> list[str]:
    """`HumanEval/0` ... `HumanEval/163`, in order."""
    return sorted(problems(), key=lambda t: int(t.split("/")[1]))


def repo_ids() -> list[str]:
    """The in-house repository tasks, in order."""
    return list(_repo_files())


@functools.cache
def get_task(task_id: str) -> CodeTask:
    """The task `task_id`; `KeyError` naming the kinds of ids otherwise."""
    if task_id in problems():
        return _humaneval(task_id)
    if task_id in _repo_files():
        return _repo(_repo_files()[task_id])
    raise KeyError(f"no code task {task_id!r} (HumanEval/0..163 or one of {repo_ids()})")


def all_tasks() -> list[CodeTask]:
    """Every task: HumanEval first, then the repository tier."""
    return [get_task(t) for t in [*humaneval_ids(), *repo_ids()]]


@functools.cache
def _recording(task_id: str) -> Recording:
    task = get_task(task_id)
    return record(
        task.hidden,
        task.candidate,
        task.reference(),
        prelude=task.prelude,
        seed=task.id,
        aliases=task.aliases,
    )


class _PackageReference(dict[str, Callable[..., Any]]):
    """Functions of a reference package, found by `module:name` on first use."""

    def __init__(self, modules: dict[str, Any]) -> None:
        super().__init__()
        self.modules = modules

    def get(self, target: str, default: Any = None) -> Any:  # type: ignore[override]
        module, _, name = target.partition(":")
        found: Any = self.modules.get(module)
        if found is None:
            return default
        for part in name.split("."):
            found = getattr(found, part, None)
        return found if callable(found) else default


@functools.cache
def _shown_calls(task_id: str) -> frozenset[tuple[str, str]]:
    task = get_task(task_id)
    found: set[tuple[str, str]] = set()
    for path, text in task.files.items():
        if not path.rsplit("/", 1)[-1].startswith("test_") or not path.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            try:
                args = [ast.literal_eval(a) for a in node.args]
                kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            except ValueError:
                continue
            if name:
                found.add((name, call_key(args, kwargs)))
    return frozenset(found)


def call_key(args: Any, kwargs: Any) -> str:
    """A call's arguments as one comparable string."""
    return json.dumps([encode(list(args)), encode(dict(kwargs))], sort_keys=True)


def _none(*args: Any, **kwargs: Any) -> None:
    return None


@functools.cache
def _package_functions(task_id: str, solved: bool) -> _PackageReference:
    """Import the reference solution of a repository task on the host (trusted code) under a
    lock, keeping its modules out of `sys.modules` afterwards."""
    task = get_task(task_id)
    root = task.candidate.split(".")[0]
    with _IMPORT_LOCK, tempfile.TemporaryDirectory(prefix="codegym-ref-") as folder:
        for path, text in {**task.files, **(task.solution if solved else {})}.items():
            target = Path(folder, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        saved = {k: v for k, v in sys.modules.items() if k == root or k.startswith(root + ".")}
        sys.path.insert(0, folder)
        try:
            modules = {}
            for path in sorted(task.solution) + sorted(task.files):
                if path.endswith(".py") and path.startswith(root + "/"):
                    name = path[:-3].replace("/", ".").removesuffix(".__init__")
                    modules[name] = import_module(name)
        finally:
            sys.path.remove(folder)
            for k in [k for k in sys.modules if k == root or k.startswith(root + ".")]:
                del sys.modules[k]
            sys.modules.update(saved)
    return _PackageReference(modules)
