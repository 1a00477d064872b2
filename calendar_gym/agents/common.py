"""What the Calendar Gym agents share: finding the task of a spec, and a generator-driven episode.

An agent's play is written as a generator: it yields tool calls (`call(tool, args)`) and receives
each call's `StepResult`; `PlayEpisode` adapts it to the runner's `AgentEpisode` protocol (the
first `act` starts the generator with the reset result).

Example:
    >>> call("settings_get", {"setting": "now"})["tool_name"]
    'settings_get'
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any

from calendar_gym.tasks.loader import LATEST, load_suite
from calendar_gym.tasks.model import Phrasing, Task
from calendar_gym.tasks.reference import outcome
from mcpgym.harness.episodes import AgentAction, EpisodeSpec
from mcpgym.types import Observation, StepResult

__all__ = ["Play", "PlayEpisode", "call", "outcome", "task_of"]

Play = Generator[dict[str, Any], StepResult[Observation], None]
"""An agent's episode: yields call actions, receives their results."""


def call(tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A `call_tool` action (its wire form)."""
    return {"type": "call_tool", "tool_name": tool, "arguments": dict(arguments)}


def task_of(spec: EpisodeSpec) -> tuple[Task, Phrasing]:
    """The task and phrasing a spec plays (from `spec.data`, as `calendar_gym.suite` builds it).

    Raises `ValueError` for a spec that is not a Calendar Gym task episode.
    """
    task_id = spec.data.get("task") or spec.reset.get("task")
    if not task_id:
        raise ValueError(f"spec {spec.id!r} names no calendar task (spec.data['task'])")
    version = str(spec.data.get("suite") or spec.reset.get("suite") or LATEST)
    phrasing = spec.data.get("phrasing", "explicit")
    if phrasing not in ("explicit", "natural"):
        raise ValueError(f"spec {spec.id!r}: unknown phrasing {phrasing!r}")
    return load_suite(version).get(str(task_id)), phrasing


class PlayEpisode:
    """Runs a `Play` generator as an `AgentEpisode`."""

    def __init__(self, make: Callable[[StepResult[Observation]], Play]) -> None:
        self._make = make
        self._play: Play | None = None

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        try:
            if self._play is None:
                self._play = self._make(result)
                return next(self._play)
            return self._play.send(result)
        except StopIteration:
            return None

    async def aclose(self) -> None:
        if self._play is not None:
            self._play.close()
