"""Run by the *openenv* virtual environment's Python: a small OpenEnv 0.10.0 server (its own
`MCPEnvironment` over a FastMCP server, its own `create_app`), for mcpgym's clients to drive.

Usage: python openenv_server.py PORT [simulation|production]
Tools: `add(a, b) -> int`, `echo(message) -> str`, `fail() -> str` (always raises).
"""

import sys
from typing import Any
from uuid import uuid4

import uvicorn
from fastmcp import FastMCP
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
from openenv.core.env_server.types import Action, Observation, State


class AdderEnv(MCPEnvironment):
    """Two tools and a failing one; each step counts."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        mcp = FastMCP("adder")

        @mcp.tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        @mcp.tool
        def echo(message: str) -> str:
            """Echo a message back."""
            return message

        @mcp.tool
        def fail() -> str:
            """Always fails."""
            raise ValueError("this tool always fails")

        super().__init__(mcp)
        self._state = State(episode_id=str(uuid4()), step_count=0)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return Observation(done=False, reward=0.0, metadata={"ready": True})

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        self._state.step_count += 1
        return super().step(action, timeout_s=timeout_s, **kwargs)

    def _step_impl(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        return Observation(done=False, reward=0.0, metadata={"error": "unknown action"})

    @property
    def state(self) -> State:
        return self._state


def main() -> None:
    port = int(sys.argv[1])
    mode = sys.argv[2] if len(sys.argv) > 2 else "simulation"
    app = create_app(
        AdderEnv,
        CallToolAction,
        CallToolObservation,
        env_name="adder",
        max_concurrent_envs=8,
        mode=mode,
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
