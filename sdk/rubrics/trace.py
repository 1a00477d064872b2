"""`RubricTrace`: the framework's per-episode bookkeeping for an environment's rubric.

Re-exported by `mcpgym.rubrics`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mcpgym.rubrics.base import Rubric, RubricInput, TrajectoryStep
from mcpgym.types import Action, Observation

__all__ = ["RubricTrace"]


class RubricTrace:
    """The framework's per-episode bookkeeping for an environment's rubric.

    One per environment instance, replaced by `reset`; `MCPEnvironment` calls `ascore` (from
    `astep`) or `score` (from `step`) once per step. It keeps the trajectory, builds the
    `RubricInput`, stores the reward on the step, and copies named scores into
    `observation.metadata["rubric"]`.

    Example:
        >>> from mcpgym.rubrics import rubric
        >>> trace = RubricTrace()
        >>> trace.score(rubric(lambda inp: len(inp.trajectory)), None, None, Observation())
        1.0
        >>> [s.reward for s in trace.steps]
        [1.0]
    """

    def __init__(self) -> None:
        self.steps: list[TrajectoryStep] = []

    def _input(self, env: Any, action: Action | None, obs: Observation) -> RubricInput:
        self.steps.append(TrajectoryStep(action, obs))
        return RubricInput(action, obs, env, tuple(self.steps))

    def _done(self, inp: RubricInput, value: float) -> float:
        self.steps[-1] = replace(self.steps[-1], reward=value)
        if inp.scores:
            inp.observation.metadata["rubric"] = dict(inp.scores)
        return value

    async def ascore(
        self, rubric: Rubric, env: Any, action: Action | None, obs: Observation
    ) -> float:
        """Score one step in a running loop (async children are awaited)."""
        inp = self._input(env, action, obs)
        return self._done(inp, await rubric.ascore(inp))

    def score(self, rubric: Rubric, env: Any, action: Action | None, obs: Observation) -> float:
        """Score one step synchronously (see `Rubric.score_sync`)."""
        inp = self._input(env, action, obs)
        return self._done(inp, rubric.score_sync(inp))
