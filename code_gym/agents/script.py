"""What Code Gym's agents share: the task of a spec, and a generator-driven episode.

An agent's play is a generator that yields tool calls (`call(tool, **arguments)`) and receives
each call's `StepResult`; `ScriptEpisode` adapts it to the runner's `AgentEpisode` protocol.

Example:
    >>> call("run_tests")
    {'type': 'call_tool', 'tool_name': 'run_tests', 'arguments': {}}
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from code_gym.tasks import CodeTask, get_task
from mcpgym.types import Observation, StepResult

__all__ = ["Script", "ScriptEpisode", "call", "result_of", "task_of", "write_all"]

Script = Generator[dict[str, Any], StepResult[Observation], None]
"""An agent's episode: yields call actions, receives their results."""


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    """A `call_tool` action (its wire form)."""
    return {"type": "call_tool", "tool_name": tool, "arguments": arguments}


def result_of(step: StepResult[Observation]) -> dict[str, Any]:
    """A call's result as a dict (`{}` when the call failed or returned something else)."""
    value = getattr(step.observation, "result", None)
    return value if isinstance(value, dict) else {}


def task_of(spec: Any) -> CodeTask:
    """The task a spec plays (`spec.data["task"]` or the `task` / `task_id` reset option)."""
    data = dict(getattr(spec, "data", {}) or {})
    reset = dict(getattr(spec, "reset", {}) or {})
    task_id = data.get("task") or reset.get("task") or reset.get("task_id")
    if not task_id:
        raise ValueError(f"spec {getattr(spec, 'id', spec)!r} names no code task")
    return get_task(str(task_id))


def write_all(files: dict[str, str]) -> Script:
    """Write every file, in path order."""
    for path in sorted(files):
        step = yield call("write_file", path=path, content=files[path])
        if step.done:
            return


class ScriptEpisode:
    """Runs a `Script` generator as an `AgentEpisode` (the first `act` starts it)."""

    def __init__(self, make: Callable[[], Script]) -> None:
        self._make = make
        self._script: Script | None = None

    async def act(self, result: StepResult[Observation]) -> dict[str, Any] | None:
        try:
            if self._script is None:
                self._script = self._make()
                return next(self._script)
            return self._script.send(result)
        except StopIteration:
            return None

    async def aclose(self) -> None:
        if self._script is not None:
            self._script.close()
