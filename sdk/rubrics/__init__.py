"""Rubrics: composable reward functions the framework applies to every step of an environment.

The building blocks are in `mcpgym.rubrics.base` (`Rubric`, `WeightedSum`, `Gate`, `Sequential`,
`TrajectoryRubric`, `rubric`); `mcpgym.rubrics.judge` has `LLMJudge`, a model behind an
OpenAI-compatible endpoint that grades a step; `mcpgym.rubrics.trace` the framework's per-episode
bookkeeping (`RubricTrace`). Every public name is importable from here.

Example:
    >>> from mcpgym.rubrics import Gate, rubric
    >>> Gate(rubric(lambda inp: 1.0)).threshold
    1.0
"""

from mcpgym.rubrics.base import (
    Gate,
    Rubric,
    RubricError,
    RubricInput,
    RubricLike,
    Sequential,
    TrajectoryRubric,
    TrajectoryStep,
    WeightedSum,
    rubric,
)
from mcpgym.rubrics.judge import DEFAULT_JUDGE_SYSTEM, JudgeError, LLMJudge, parse_score
from mcpgym.rubrics.trace import RubricTrace

__all__ = [
    "DEFAULT_JUDGE_SYSTEM",
    "Gate",
    "JudgeError",
    "LLMJudge",
    "Rubric",
    "RubricError",
    "RubricInput",
    "RubricLike",
    "RubricTrace",
    "Sequential",
    "TrajectoryRubric",
    "TrajectoryStep",
    "WeightedSum",
    "parse_score",
    "rubric",
]
