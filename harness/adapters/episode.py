"""The data of a harness episode: `HarnessAction` in, `HarnessObservation` and `HarnessState`
out (the `HarnessEnvironment`'s action, observation and state types).

Example:
    >>> HarnessAction(message="Find the number.").message
    'Find the number.'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, Field

from mcpgym.harness.adapters.env_server import EnvToolCall
from mcpgym.types import Action, Observation, State

__all__ = ["EventHook", "HarnessAction", "HarnessObservation", "HarnessState", "Termination"]

EventHook: TypeAlias = Callable[[BaseModel], Awaitable[None] | None]
"""Called with each event of a turn as it happens."""

Termination = Literal["harness_crashed", "turn_timeout"]
"""How a turn ended an episode abnormally."""


class HarnessAction(Action):
    """One user message: the harness answers it in one turn."""

    message: str = Field(min_length=1)


class HarnessObservation(Observation):
    """What one turn did: the response, the events, the environment's record of the tool calls,
    and — when the turn ended the episode abnormally — `termination` and `error`."""

    response: str = ""
    events: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: list[EnvToolCall] = Field(default_factory=list)
    termination: Termination | None = None
    error: str | None = None


class HarnessState(State):
    """The episode's bookkeeping; `env_state` is the wrapped environment's state."""

    harness: str = ""
    running: bool = False
    turns: int = 0
    tool_calls: int = 0
    termination: Termination | None = None
    mcp_url: str | None = None
    env_state: dict[str, Any] = Field(default_factory=dict)
