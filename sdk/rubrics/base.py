"""Rubrics: composable reward functions the framework applies to every step of an environment.

Give an `MCPEnvironment` a `rubric` (class or instance attribute) and the framework scores every
step with it, `done` included; the author never calls it by hand, and it replaces `reward()`. A
rubric sees one `RubricInput`: the action, the observation (with `done` already set), the
environment (read its state; do not change it) and the episode's trajectory so far.

- `Rubric` — the base: override `score(inp)`, plain or `async`; or wrap a function with `rubric`.
- `WeightedSum` — Σ wᵢ·sᵢ over children (async children run concurrently).
- `Gate` — the child's score when it reaches `threshold`, else 0.
- `Sequential` — children in order; the first 0 stops the chain and is the score, else the last.
- `TrajectoryRubric` — delayed reward: `intermediate` (0) on every step, the trajectory's score
  when the episode is done.

Rubrics are shared by every instance of an environment class, so they must hold no per-episode
state; what a rubric needs about the episode is in `RubricInput.trajectory`. A rubric with a
`name` also reports its score under that name in `observation.metadata["rubric"]`.

Example:
    >>> from mcpgym import CallToolObservation
    >>> no_error = rubric(lambda inp: 0.0 if getattr(inp.observation, "error", None) else 1.0)
    >>> solved = rubric(lambda inp: 1.0 if inp.observation.done else 0.0)
    >>> r = Sequential(Gate(no_error), WeightedSum([(0.2, no_error), (0.8, solved)]))
    >>> obs = CallToolObservation(tool_name="guess", result={"verdict": "correct"}, done=True)
    >>> r.score_sync(RubricInput(action=None, observation=obs))
    1.0
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpgym.errors import ExecutionError
from mcpgym.types import Action, Observation

__all__ = [
    "Gate",
    "Rubric",
    "RubricError",
    "RubricInput",
    "RubricLike",
    "Sequential",
    "TrajectoryRubric",
    "TrajectoryStep",
    "WeightedSum",
    "rubric",
]

log = logging.getLogger("mcpgym.rubrics")

ScoreFn = Callable[["RubricInput"], float | Awaitable[float]]


class RubricError(ExecutionError):
    """A rubric failed (raised, returned a non-number, or a judge could not be asked).

    It is an `ExecutionError`: a step whose rubric fails fails for that session only.
    """


@dataclass(frozen=True, slots=True)
class TrajectoryStep:
    """One step of an episode: the action, its observation and the reward it got.

    The step being scored is the last one of `RubricInput.trajectory`, with `reward=None`.
    """

    action: Action | None
    observation: Observation
    reward: float | None = None


@dataclass(frozen=True, slots=True)
class RubricInput:
    """What a rubric sees.

    Attributes:
        action: the action of the step being scored.
        observation: its observation; `observation.done` is already final.
        env: the environment instance (read `env.state`, its world, …; never mutate it).
        trajectory: every step of the episode so far, oldest first, the current one last.
        scores: named scores recorded while this input is scored (see `Rubric.name`).
    """

    action: Action | None
    observation: Observation
    env: Any = None
    trajectory: Sequence[TrajectoryStep] = ()
    scores: dict[str, float] = field(default_factory=dict[str, float])

    @property
    def done(self) -> bool:
        """Whether this step ends the episode."""
        return self.observation.done


class Rubric:
    """Base class: a reward function of one step. Override `score` (plain or `async`).

    Attributes:
        name: when set, the score is also recorded under this name in `RubricInput.scores` (and
            so in `observation.metadata["rubric"]`).

    Example:
        >>> class NoError(Rubric):
        ...     def score(self, inp):
        ...         return 0.0 if getattr(inp.observation, "error", None) else 1.0
        >>> NoError(name="ok").score_sync(RubricInput(action=None, observation=Observation()))
        1.0
    """

    name: str | None = None

    def __init__(self, *, name: str | None = None) -> None:
        self.name = name

    def score(self, inp: RubricInput) -> float | Awaitable[float]:
        """The step's score. Override in subclasses."""
        raise NotImplementedError(f"{type(self).__name__} must implement score()")

    async def ascore(self, inp: RubricInput) -> float:
        """Score `inp` (awaiting an async `score`); validates and records the result."""
        try:
            value = self.score(inp)
            if inspect.isawaitable(value):
                value = await value
        except RubricError:
            raise
        except Exception as exc:
            raise self._failed(exc) from exc
        return self._record(inp, value)

    def score_sync(self, inp: RubricInput) -> float:
        """Score `inp` without an event loop; an async `score` runs in a fresh loop.

        Raises `RubricError` if an async rubric is scored synchronously inside a running loop
        (use `ascore` there).
        """
        try:
            value = self.score(inp)
            if inspect.isawaitable(value):
                value = _run(value, self)
        except RubricError:
            raise
        except Exception as exc:
            raise self._failed(exc) from exc
        return self._record(inp, value)

    def children(self) -> list[Rubric]:
        """The rubrics this one is built from (none for a leaf)."""
        return []

    def _record(self, inp: RubricInput, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise RubricError(f"{self!r} returned {value!r}, not a number", rubric=repr(self))
        score = float(value)
        if self.name:
            inp.scores[self.name] = score
        return score

    def _failed(self, exc: Exception) -> RubricError:
        return RubricError(f"{self!r} raised {type(exc).__name__}: {exc}", rubric=repr(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})" if self.name else f"{type(self).__name__}()"


RubricLike = Rubric | ScoreFn
"""A `Rubric`, or a function of a `RubricInput` (plain or async) that containers wrap."""


class _FnRubric(Rubric):
    def __init__(self, fn: ScoreFn, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self.fn = fn

    def score(self, inp: RubricInput) -> float | Awaitable[float]:
        return self.fn(inp)

    def __repr__(self) -> str:
        return f"rubric({self.name or getattr(self.fn, '__name__', 'fn')})"


def rubric(fn: RubricLike, *, name: str | None = None) -> Rubric:
    """Make a `Rubric` of a function of `RubricInput` (a `Rubric` is returned unchanged).

    Example:
        >>> r = rubric(lambda inp: 0.5, name="half")
        >>> inp = RubricInput(action=None, observation=Observation())
        >>> r.score_sync(inp), inp.scores
        (0.5, {'half': 0.5})
    """
    return fn if isinstance(fn, Rubric) else _FnRubric(fn, name=name)


# -- containers ------------------------------------------------------------------------------------


class WeightedSum(Rubric):
    """Σ weight·score over `(weight, rubric)` pairs; async children are scored concurrently.

    Example:
        >>> r = WeightedSum([(0.7, lambda inp: 1.0), (0.3, lambda inp: 0.0)])
        >>> r.score_sync(RubricInput(action=None, observation=Observation()))
        0.7
    """

    def __init__(
        self, parts: Iterable[tuple[float, RubricLike]], *, name: str | None = None
    ) -> None:
        super().__init__(name=name)
        self.parts = [(float(w), rubric(r)) for w, r in parts]
        if not self.parts:
            raise ValueError("WeightedSum needs at least one (weight, rubric) pair")

    def children(self) -> list[Rubric]:
        return [r for _, r in self.parts]

    async def score(self, inp: RubricInput) -> float:
        scores = await asyncio.gather(*(r.ascore(inp) for _, r in self.parts))
        return math.fsum(w * s for (w, _), s in zip(self.parts, scores, strict=True))

    def score_sync(self, inp: RubricInput) -> float:
        total = math.fsum(w * r.score_sync(inp) for w, r in self.parts)
        return self._record(inp, total)


class Gate(Rubric):
    """The child's score if it is at least `threshold`, else `0.0` (a hard constraint).

    Example:
        >>> inp = RubricInput(action=None, observation=Observation())
        >>> Gate(lambda inp: 0.4, threshold=0.5).score_sync(inp)
        0.0
        >>> Gate(lambda inp: 0.6, threshold=0.5).score_sync(inp)
        0.6
    """

    def __init__(self, child: RubricLike, threshold: float = 1.0, *, name: str | None = None):
        super().__init__(name=name)
        self.child = rubric(child)
        self.threshold = threshold

    def children(self) -> list[Rubric]:
        return [self.child]

    def _gate(self, value: float) -> float:
        return value if value >= self.threshold else 0.0

    async def score(self, inp: RubricInput) -> float:
        return self._gate(await self.child.ascore(inp))

    def score_sync(self, inp: RubricInput) -> float:
        return self._record(inp, self._gate(self.child.score_sync(inp)))


class Sequential(Rubric):
    """Children in order: the first that scores exactly 0 ends the chain (later children are not
    scored, so put cheap checks first); otherwise the last child's score.

    Example:
        >>> calls = []
        >>> expensive = rubric(lambda inp: calls.append(1) or 1.0)
        >>> Sequential(lambda inp: 0.0, expensive).score_sync(
        ...     RubricInput(action=None, observation=Observation())), calls
        (0.0, [])
    """

    def __init__(self, *children: RubricLike, name: str | None = None) -> None:
        super().__init__(name=name)
        self.chain = [rubric(c) for c in children]
        if not self.chain:
            raise ValueError("Sequential needs at least one rubric")

    def children(self) -> list[Rubric]:
        return list(self.chain)

    async def score(self, inp: RubricInput) -> float:
        value = 0.0
        for child in self.chain:
            value = await child.ascore(inp)
            if value == 0.0:
                return 0.0
        return value

    def score_sync(self, inp: RubricInput) -> float:
        value = 0.0
        for child in self.chain:
            value = child.score_sync(inp)
            if value == 0.0:
                break
        return self._record(inp, value)


class TrajectoryRubric(Rubric):
    """Delayed reward: `intermediate` on every step, the whole trajectory's score at `done`.

    Override `score_trajectory` (plain or `async`) or pass `fn`. `step_rewards` spreads a final
    score back over the steps (discount `gamma`) for trainers that want per-step credit.

    Example:
        >>> r = TrajectoryRubric(lambda steps: 1.0 / len(steps))
        >>> steps = [TrajectoryStep(None, Observation()), TrajectoryStep(None, Observation())]
        >>> r.score_sync(RubricInput(None, Observation(done=False), trajectory=steps[:1]))
        0.0
        >>> r.score_sync(RubricInput(None, Observation(done=True), trajectory=steps))
        0.5
        >>> r.step_rewards(1.0, 3, gamma=0.5)
        [0.25, 0.5, 1.0]
    """

    def __init__(
        self,
        fn: Callable[[Sequence[TrajectoryStep]], float | Awaitable[float]] | None = None,
        *,
        intermediate: float = 0.0,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name)
        self.fn = fn
        self.intermediate = intermediate

    def score_trajectory(self, trajectory: Sequence[TrajectoryStep]) -> float | Awaitable[float]:
        """The finished episode's score (`trajectory[-1]` is the final step)."""
        if self.fn is None:
            raise NotImplementedError(f"{type(self).__name__} must implement score_trajectory()")
        return self.fn(trajectory)

    def score(self, inp: RubricInput) -> float | Awaitable[float]:
        if not inp.done:
            return self.intermediate
        return self.score_trajectory(inp.trajectory)

    @staticmethod
    def step_rewards(final: float, n_steps: int, *, gamma: float = 1.0) -> list[float]:
        """`final · gamma^(n_steps-1-t)` for each step `t`: the last step gets the full score."""
        return [final * gamma ** (n_steps - 1 - t) for t in range(n_steps)]


# -- applying a rubric to an environment -----------------------------------------------------------


def _run(awaitable: Awaitable[Any], who: Rubric) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:

        async def wait() -> Any:
            return await awaitable

        return asyncio.run(wait())
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    raise RubricError(
        f"{who!r} is async and cannot be scored synchronously inside a running event loop; "
        "use astep() / ascore()",
        rubric=repr(who),
    )
