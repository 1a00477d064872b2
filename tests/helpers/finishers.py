"""Tiny environments for the after-`done` tests: every step is worth 1, `end()` ends the
episode (`look()` does not), scored by the `reward()` hook or by a rubric."""

from __future__ import annotations

from typing import Any

from mcpgym import MCPEnvironment, tool
from mcpgym.rubrics import Rubric

__all__ = ["AlwaysOne", "Finisher", "RubricFinisher"]


class Finisher(MCPEnvironment):
    """`end()` ends the episode, `look()` does not; every step is worth 1 by `reward()`."""

    @tool
    def end(self) -> str:
        """End the episode."""
        self.end_episode()
        return "over"

    @tool
    def look(self) -> str:
        """Look around."""
        return "a room"

    def reward(self, action: Any, observation: Any) -> float:
        return 1.0


class AlwaysOne(Rubric):
    def score(self, inp: Any) -> float:
        return 1.0


class RubricFinisher(Finisher):
    rubric = AlwaysOne()
