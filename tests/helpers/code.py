"""One Code Gym tool call, in process (the tests' shorthand)."""

from __future__ import annotations

from typing import Any

from code_gym import CodeEnv
from mcpgym import CallToolAction, Observation


def step(env: CodeEnv, tool: str, **args: Any) -> Observation:
    """`env.step` of the tool call `tool(**args)`."""
    return env.step(CallToolAction(tool_name=tool, arguments=args))
