"""Guess the Number: the small example environment used by the README, docs and tests.

The agent must find a secret integer in `[low, high]`. Every `guess` is a step: reward 1.0 and
`done` when it hits, a small penalty otherwise. It shows the three kinds of tool:

- `guess` — untagged, so it exists in both modes;
- `hint` — `mode="simulation"`: a trainer-only peek at the distance (never served in production);
- `leaderboard` — `mode="production"`: only meaningful for a live, long-running service.

Serve it: `mcpgym serve mcpgym.examples.guess:GuessEnv`.
"""

from __future__ import annotations

import random
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, Field

from mcpgym import Action, CallToolObservation, MCPEnvironment, Observation, State, tool

__all__ = ["GuessEnv", "GuessResult", "GuessState"]


class GuessState(State):
    """Episode state: bounds, guesses so far and whether the number was found."""

    low: int = 1
    high: int = 100
    guesses: list[int] = Field(default_factory=list)
    solved: bool = False


class GuessResult(BaseModel):
    """What `guess` returns."""

    verdict: Literal["higher", "lower", "correct"]
    guesses: int


class GuessEnv(MCPEnvironment):
    """Find the secret number with as few guesses as possible."""

    description = "Find a secret integer; each guess is answered higher, lower or correct."
    version = "1.0.0"
    state_type = GuessState
    blocking = False  # every tool is a few microseconds of pure Python

    def __init__(self) -> None:
        self._secret = 0
        self._best_runs: list[int] = []

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        """Draw a new secret. Options: `low`, `high` (default 1 and 100); `secret` plants it."""
        super().reset(seed=seed, episode_id=episode_id)
        low, high = int(kwargs.get("low", 1)), int(kwargs.get("high", 100))
        if low > high:
            raise ValueError(f"low ({low}) must not exceed high ({high})")
        planted = kwargs.get("secret")  # a validator's canary (docs/validation.md)
        self._secret = (
            int(planted) if planted is not None else random.Random(seed).randint(low, high)
        )
        self._state = GuessState(episode_id=self._state.episode_id, low=low, high=high)
        return Observation(metadata={"prompt": f"Guess the integer between {low} and {high}."})

    @property
    def game(self) -> GuessState:
        """This episode's `GuessState` (the typed view of `state`)."""
        return cast(GuessState, self._state)

    @tool(annotations={"readOnlyHint": False})
    def guess(self, n: Annotated[int, Field(description="Your guess.")]) -> GuessResult:
        """Guess the secret number; the answer says whether it is higher, lower or correct."""
        st = self.game
        if not st.low <= n <= st.high:
            raise ValueError(f"{n} is outside [{st.low}, {st.high}]")
        st.guesses.append(n)
        if n == self._secret:
            st.solved = True
            self._best_runs.append(len(st.guesses))
            self.end_episode()
            return GuessResult(verdict="correct", guesses=len(st.guesses))
        verdict: Literal["higher", "lower"] = "higher" if self._secret > n else "lower"
        return GuessResult(verdict=verdict, guesses=len(st.guesses))

    @tool(mode="simulation")
    def hint(self) -> int:
        """Trainer-only: how far the last guess was from the secret."""
        return abs(self._secret - self.game.guesses[-1]) if self.game.guesses else -1

    @tool(mode="production", annotations={"readOnlyHint": True})
    def leaderboard(self, top: int = 3) -> list[int]:
        """The fewest guesses any solved game of this service needed.

        Args:
            top: how many entries to return.
        """
        return sorted(self._best_runs)[:top]

    def reward(self, action: Action, observation: Observation) -> float | None:
        if not isinstance(observation, CallToolObservation):
            return 0.0
        if observation.error is not None:
            return -0.1
        return 1.0 if self.game.solved and observation.tool_name == "guess" else -0.01
