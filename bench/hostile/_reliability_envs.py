"""Environments for `just bench-reliability` (served by `mcpgym serve`): sync tools that hang,
answer at once, or build a huge result."""

from __future__ import annotations

import time

from mcpgym import MCPEnvironment, tool


class HangEnv(MCPEnvironment):
    """`hang` holds a worker thread for `seconds`; `ping` answers at once; `blob` returns
    `mib` MiB of text."""

    @tool
    def hang(self, seconds: float = 15.0) -> str:
        """Sleep in a worker thread."""
        time.sleep(seconds)
        return "woke"

    @tool
    def ping(self) -> str:
        """Answer at once."""
        return "pong"

    @tool
    def blob(self, mib: int = 100) -> str:
        """A result of `mib` MiB."""
        return "x" * (mib << 20)
