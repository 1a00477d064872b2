"""Helpers for Calendar Gym tests: a `Caller` that drives tools through the SDK's `step`."""

from __future__ import annotations

from typing import Any

from calendar_gym import CalendarEnv
from mcpgym import CallToolAction, CallToolObservation

__all__ = ["Caller", "make"]


class Caller:
    """Calls tools of one environment through the real SDK path (`env.step`)."""

    def __init__(self, env: CalendarEnv) -> None:
        self.env = env

    def __call__(self, tool: str, **arguments: Any) -> CallToolObservation:
        obs = self.env.step(CallToolAction(tool_name=tool, arguments=arguments))
        assert isinstance(obs, CallToolObservation)
        return obs

    def ok(self, tool: str, **arguments: Any) -> Any:
        """The result of a call that must succeed."""
        obs = self(tool, **arguments)
        assert obs.error is None, f"{tool} failed: {obs.error}"
        return obs.result

    def fail(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured error object of a call that must fail."""
        obs = self(tool, **arguments)
        assert obs.error is not None, f"{tool} unexpectedly succeeded: {obs.result}"
        info = obs.error.model_dump()
        assert "error" in info, f"no structured error in {info}"
        return info["error"]


def make(**options: Any) -> tuple[CalendarEnv, Caller]:
    """A reset environment and its caller."""
    env = CalendarEnv()
    env.reset(seed=options.pop("seed", 1), **options)
    return env, Caller(env)
