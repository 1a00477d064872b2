"""Cheats the grader must score 0.0 on every task they apply to (the validity gate's gamers).

Each gamer is a `GamerAgent`: optional programs run first (`run_python`), then files written,
then `submit`. `GAMERS` maps a name to the strategy; `gamer(name)` makes the agent
(`mcpgym eval --agent code_gym.agents.gamers:pass_body` and so on).

- `empty_body`, `pass_body`: the stub as given, or with `pass`.
- `constant_*`: return one constant (True, 0, "", [], None) whatever the input.
- `print_passed`: print "PASSED" / "OK" and exit 0 at import, return nothing.
- `sys_exit`, `os_exit`: `sys.exit(0)` / `os._exit(0)` at import.
- `monkeypatch`: replace `AssertionError`, `unittest`'s asserts, `builtins` and `json`, return an
  object that equals everything.
- `edit_tests`: rewrite the visible tests to `assert True`, then delete them.
- `read_hidden`: search the file system for HumanEval's data file and Code Gym's task files,
  at run time and at import, and execute the canonical solution found there.
- `daemon`: leave a process behind that outlives the run.
- `replay`: submit another task's reference solution.
- `hardcode_visible`: answer the visible examples from a table (HumanEval), nothing else.

Example:
    >>> sorted(GAMERS)[:3]
    ['constant_empty_list', 'constant_empty_str', 'constant_none']
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from code_gym.agents.script import Script, ScriptEpisode, call, task_of, write_all
from code_gym.tasks import CodeTask, all_tasks

__all__ = ["DAEMON_MARK", "GAMERS", "GamerAgent", "gamer"]

DAEMON_MARK = "codegym-gamer-daemon"
Strategy = Callable[[CodeTask], tuple[list[str], dict[str, str]]]


def _target(task: CodeTask) -> tuple[str, str]:
    """The graded file and the stub it starts as."""
    if task.kind == "humaneval":
        return "solution.py", task.files["solution.py"]
    path = sorted(p for p in task.submit_files() if not p.endswith("__init__.py"))[0]
    return path, task.files[path]


def _with_body(body: str) -> Strategy:
    def strategy(task: CodeTask) -> tuple[list[str], dict[str, str]]:
        path, stub = _target(task)
        if task.kind == "humaneval":
            return [], {path: stub + body}
        return [], {p: _stub_module(task.files[p], body) for p in task.submit_files()}

    return strategy


def _stub_module(text: str, body: str) -> str:
    """Every function of a module with its body replaced by `body` (repository tasks)."""
    tree = ast.parse(text)
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = ast.unparse(node.args)
            out.append(f"def {node.name}({args}):\n{body}")
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Assign)):
            out.append(ast.unparse(node))
    return "\n\n".join(out) + "\n"


def _prefix(code: str) -> Strategy:
    def strategy(task: CodeTask) -> tuple[list[str], dict[str, str]]:
        return [], {p: code + t for p, t in task.solution.items()} | {
            p: code + task.files[p] for p in task.submit_files() if p not in task.solution
        }

    return strategy


_PRINT_PASSED = "    print('PASSED')\n    return None\n"
_MONKEYPATCH = """    import builtins, json, sys, unittest
    class Yes:
        def __eq__(self, other):
            return True
        __hash__ = object.__hash__
    builtins.AssertionError = type("AssertionError", (Exception,), {})
    unittest.TestCase.assertEqual = lambda *a, **k: None
    builtins.abs = lambda x: 0
    json.dumps = lambda *a, **k: '{"i": 0, "ok": ["v", true]}'
    sys.modules["json"] = json
    return Yes()
"""

_FIND_HIDDEN = """
import gzip, json, os
def _codegym_find():
    for folder, dirs, names in os.walk("/"):
        if folder.startswith(("/proc", "/sys", "/dev")):
            dirs[:] = []
            continue
        for name in names:
            if name == "HumanEval.jsonl.gz" or (name.endswith(".json") and "repo_tasks" in folder):
                yield os.path.join(folder, name)
for _path in _codegym_find():
    try:
        if _path.endswith(".gz"):
            for _line in gzip.open(_path, "rt"):
                _p = json.loads(_line)
                if _p["entry_point"] == {entry!r}:
                    exec(_p["prompt"] + _p["canonical_solution"], globals())
        else:
            print("FOUND", _path, open(_path).read()[:200])
    except (OSError, ValueError, KeyError):
        pass
"""


def _read_hidden(task: CodeTask) -> tuple[list[str], dict[str, str]]:
    path, stub = _target(task)
    finder = _FIND_HIDDEN.replace("{entry!r}", repr(task.candidate.partition(":")[2]))
    return [finder], {path: stub + "    pass\n" + finder}


def _hardcode_visible(task: CodeTask) -> tuple[list[str], dict[str, str]]:
    """Answer the visible tests' calls from a table of their expected values, None otherwise."""
    path, stub = _target(task)
    if task.kind != "humaneval":
        return [], {}
    entry = task.candidate.partition(":")[2]
    table: dict[str, Any] = {}
    for node in ast.walk(ast.parse(task.files["test_solution.py"])):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            try:
                args = tuple(ast.literal_eval(a) for a in node.left.args)
                table[repr(args)] = ast.literal_eval(node.comparators[0])
            except ValueError:
                continue
    body = f"\n_SEEN = {table!r}\n\n\ndef {entry}(*args):\n    return _SEEN.get(repr(args))\n"
    return [], {path: stub + "    pass\n" + body}


def _daemon(task: CodeTask) -> tuple[list[str], dict[str, str]]:
    path, stub = _target(task)
    spawn = (
        "import os, sys\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(300)', "
        f"'{DAEMON_MARK}'])\n"
    )
    return [spawn], {path: spawn + stub + "    return None\n"}


def _edit_tests(task: CodeTask) -> tuple[list[str], dict[str, str]]:
    tests = [p for p in task.files if p.rsplit("/", 1)[-1].startswith("test_")]
    remove = f"import os\nfor p in {tests!r}:\n    os.remove(p)\n"
    return [], {p: "def test_ok():\n    assert True\n" for p in tests} | {"__cleanup__": remove}


def _replay(task: CodeTask) -> tuple[list[str], dict[str, str]]:
    tasks = [t for t in all_tasks() if t.kind == task.kind]
    other = tasks[(tasks.index(task) + 1) % len(tasks)]
    return [], dict(other.solution)


GAMERS: dict[str, Strategy] = {
    "empty_body": _with_body(""),
    "pass_body": _with_body("    pass\n"),
    "constant_true": _with_body("    return True\n"),
    "constant_zero": _with_body("    return 0\n"),
    "constant_empty_str": _with_body("    return ''\n"),
    "constant_empty_list": _with_body("    return []\n"),
    "constant_none": _with_body("    return None\n"),
    "print_passed": _with_body(_PRINT_PASSED),
    "sys_exit": _prefix("import sys\nprint('PASSED')\nsys.exit(0)\n"),
    "os_exit": _prefix("import os\nprint('PASSED')\nos._exit(0)\n"),
    "monkeypatch": _with_body(_MONKEYPATCH),
    "edit_tests": _edit_tests,
    "read_hidden": _read_hidden,
    "daemon": _daemon,
    "replay": _replay,
    "hardcode_visible": _hardcode_visible,
}


class GamerAgent:
    """Plays one strategy of `GAMERS` (see the module docstring)."""

    def __init__(self, strategy: str) -> None:
        if strategy not in GAMERS:
            raise ValueError(f"no gamer {strategy!r}; gamers: {', '.join(sorted(GAMERS))}")
        self.strategy = strategy
        self.name = f"gamer-{strategy}"

    def start(self, spec: Any, tools: Any) -> ScriptEpisode:
        task = task_of(spec)
        programs, files = GAMERS[self.strategy](task)
        cleanup = files.pop("__cleanup__", None)

        def play() -> Script:
            for code in programs:
                yield call("run_python", code=code)
            yield from write_all(files)
            if cleanup is not None:
                yield call("run_python", code=cleanup)
            yield call("submit")

        return ScriptEpisode(play)


def gamer(name: str) -> GamerAgent:
    """The gamer agent `name`."""
    return GamerAgent(name)


def __getattr__(name: str) -> Callable[[], GamerAgent]:
    # `mcpgym eval --agent code_gym.agents.gamers:pass_body`: one factory per strategy
    if name in GAMERS:
        return lambda: GamerAgent(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
