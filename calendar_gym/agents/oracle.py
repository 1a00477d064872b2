"""`OracleAgent`: plays a task's gold plan, step by step, whatever the phrasing.

Entity references become their true values and `{"$from": "step.path"}` reads the result of an
earlier step (e.g. the id of the calendar the plan just created). A step that expects an error (a
trap's `PERMISSION_DENIED`) gets it and the plan goes on to `finish`. The oracle passes every
task in both phrasings; the tests check exactly that, which also proves each task solvable.

Example:
    >>> import asyncio
    >>> from mcpgym.harness.eval.runner import run_evaluation
    >>> from calendar_gym import CalendarEnv
    >>> from calendar_gym.suite import specs
    >>> result = run_evaluation(CalendarEnv, OracleAgent(), specs(tasks=["t1-create-haircut"]))
    >>> result.summary["success_rate"]
    1.0
"""

from __future__ import annotations

from calendar_gym.agents.common import Play, PlayEpisode, task_of
from calendar_gym.tasks.model import Task
from calendar_gym.tasks.reference import plan_play
from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = ["OracleAgent", "oracle_play"]


def oracle_play(task: Task) -> Play:
    """The gold plan as a `Play` (`calendar_gym.tasks.reference.plan_play`)."""
    return plan_play(task)


class OracleAgent:
    """Executes the gold plan of the spec's task (see the module docstring)."""

    name = "oracle"

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> PlayEpisode:
        task, _ = task_of(spec)

        def make(first: StepResult[Observation]) -> Play:
            return oracle_play(task)

        return PlayEpisode(make)
