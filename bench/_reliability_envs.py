"""Environments for `just bench-reliability`: sync tools that hang (served by `mcpgym serve`)."""

from __future__ import annotations

import time

from mcpgym import MCPEnvironment, tool


class HangEnv(MCPEnvironment):
    """`hang` holds a worker thread for `seconds`; `ping` answers at once."""

    @tool
    def hang(self, seconds: float = 15.0) -> str:
        """Sleep in a worker thread."""
        time.sleep(seconds)
        return "woke"

    @tool
    def ping(self) -> str:
        """Answer at once."""
        return "pong"
