"""Code Gym's reference agents: `oracle` (the ceiling) and `naive` (the ablation's probe).

- `OracleAgent` writes the task's reference solution (HumanEval's canonical solution, or the
  repository task's fixed files) and submits: reward 1.0 on every task.
- `NaiveAgent` types the reference solution with one slip — the colon of the first `def`
  line dropped — runs the file, and repairs the slip only from the structured error's fields
  (`type` SyntaxError, `line`): with `error_mode="structured"` it scores 1.0, with `plain` it
  cannot locate the fault and submits the broken file (0.0). It measures what the structured
  errors are worth to an agent that reads fields, not what a model would do.

Example:
    >>> from mcpgym.harness.eval.runner import run_evaluation
    >>> from code_gym import CodeEnv
    >>> from code_gym.suite import specs
    >>> result = run_evaluation(CodeEnv, NaiveAgent(), specs(tasks=["HumanEval/2"]))
    >>> [r.reward_final for r in result.records]
    [1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

from code_gym.agents.script import Script, ScriptEpisode, call, result_of, task_of, write_all
from code_gym.tasks import CodeTask

__all__ = ["NaiveAgent", "OracleAgent", "slip"]


class OracleAgent:
    """Writes the reference solution and submits (see the module docstring)."""

    name = "code-oracle"

    def start(self, spec: Any, tools: Any) -> ScriptEpisode:
        task = task_of(spec)

        def play() -> Script:
            yield from write_all(task.solution)
            yield call("submit")

        return ScriptEpisode(play)


def slip(text: str) -> tuple[str, int] | None:
    """`text` with the colon of its first `def` line dropped, and that line's number."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith("def ") and line.rstrip().endswith(":"):
            lines[i] = line.rstrip()[:-1]
            return "\n".join(lines), i + 1
    return None


def _main_file(task: CodeTask) -> str:
    return "solution.py" if "solution.py" in task.solution else sorted(task.solution)[-1]


class NaiveAgent:
    """Reference solution with one slip, repaired from structured fields only."""

    name = "code-naive"

    def start(self, spec: Any, tools: Any) -> ScriptEpisode:
        task = task_of(spec)

        def play() -> Script:
            files = dict(task.solution)
            target = _main_file(task)
            broken = slip(files[target])
            if broken is not None:
                files[target] = broken[0]
            yield from write_all(files)
            step = yield call("run_python", code=f"import {_module(target)}")
            error = result_of(step).get("error") or {}
            if error.get("type") == "SyntaxError" and error.get("file") == target:
                line = error.get("line")
                if isinstance(line, int):
                    lines = files[target].split("\n")
                    if 0 < line <= len(lines) and not lines[line - 1].rstrip().endswith(":"):
                        lines[line - 1] = lines[line - 1].rstrip() + ":"
                        yield call("write_file", path=target, content="\n".join(lines))
            yield call("run_tests")
            yield call("submit")

        return ScriptEpisode(play)


def _module(path: str) -> str:
    return path[:-3].replace("/", ".").removesuffix(".__init__")
