"""mcpgym.harness.adapters: drive real agent harnesses against an environment's tools.

`AgenticHarnessAdapter` is the contract (start → turn → … → stop, streaming `HarnessEvent`s);
the adapters are `ClaudeCodeAdapter`, `CodexAdapter`, `OpenCodeAdapter`, `CliAdapter` /
`OneShotCliAdapter` (any program) and `PythonAdapter` (an async callable). `make_adapter` builds
one by name, as `mcpgym eval --harness NAME` does. See docs/harness.md.

Example:
    >>> adapter = make_adapter("claude-code", executable="claude")
    >>> adapter.capabilities.tool_name("env", "guess"), adapter.capabilities.process
    ('mcp__env__guess', 'persistent')
    >>> sorted(ADAPTERS)
    ['claude-code', 'cli', 'codex', 'opencode', 'python']
"""

from __future__ import annotations

from typing import Any

from mcpgym.harness.adapters.base import (
    AgenticHarnessAdapter,
    ErrorEvent,
    HarnessCapabilities,
    HarnessCrashed,
    HarnessError,
    HarnessEvent,
    LlmRequestEvent,
    LlmResponseEvent,
    McpServer,
    ModelEndpoint,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnComplete,
    event_adapter,
)
from mcpgym.harness.adapters.claude_code import ClaudeCodeAdapter
from mcpgym.harness.adapters.cli import CliAdapter, OneShotCliAdapter
from mcpgym.harness.adapters.codex import CodexAdapter
from mcpgym.harness.adapters.env_server import EnvToolCall, EpisodeToolServer
from mcpgym.harness.adapters.home import EpisodeHome
from mcpgym.harness.adapters.opencode import OpenCodeAdapter
from mcpgym.harness.adapters.process import HarnessProcess
from mcpgym.harness.adapters.python import PythonAdapter, PythonHarnessContext, ToolOutput

__all__ = [
    "ADAPTERS",
    "AgenticHarnessAdapter",
    "ClaudeCodeAdapter",
    "CliAdapter",
    "CodexAdapter",
    "EnvToolCall",
    "EpisodeHome",
    "EpisodeToolServer",
    "ErrorEvent",
    "HarnessCapabilities",
    "HarnessCrashed",
    "HarnessError",
    "HarnessEvent",
    "HarnessProcess",
    "LlmRequestEvent",
    "LlmResponseEvent",
    "McpServer",
    "ModelEndpoint",
    "OneShotCliAdapter",
    "OpenCodeAdapter",
    "PythonAdapter",
    "PythonHarnessContext",
    "TextEvent",
    "ToolCallEvent",
    "ToolOutput",
    "ToolResultEvent",
    "TurnComplete",
    "event_adapter",
    "make_adapter",
]

ADAPTERS: dict[str, type[AgenticHarnessAdapter]] = {
    "claude-code": ClaudeCodeAdapter,
    "codex": CodexAdapter,
    "opencode": OpenCodeAdapter,
    "cli": CliAdapter,
    "python": PythonAdapter,
}
"""Adapter classes by the name `mcpgym eval --harness` takes."""


def make_adapter(name: str, **options: Any) -> AgenticHarnessAdapter:
    """Build the adapter called `name` with its keyword options.

    `cli` takes `command=[...]` (and `one_shot=True` for a command per turn); `python` takes
    `agent=<async callable>`; the CLI harnesses take `executable=` and their own options.
    """
    if name not in ADAPTERS:
        raise ValueError(f"unknown harness {name!r}; known: {', '.join(sorted(ADAPTERS))}")
    if name == "cli":
        command = options.pop("command")
        cls = OneShotCliAdapter if options.pop("one_shot", False) else CliAdapter
        return cls(command, **options)
    if name == "python":
        return PythonAdapter(options.pop("agent"), **options)
    return ADAPTERS[name](**options)
