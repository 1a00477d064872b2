"""`CliAdapter`: any program as a harness — NDJSON turns over stdin/stdout, or a one-shot command.

**NDJSON** (`CliAdapter(["my-agent"])`): one process per episode. Each turn writes one line
`{"type": "user", "message": "...", "turn": 1}` to its stdin; the program answers with JSON
lines of the `HarnessEvent` shapes (`{"type": "tool_call", "name": ..., "arguments": {...}}`,
`{"type": "text", "text": ...}`, …) and ends the turn with
`{"type": "turn_complete", "response": "...", "done": false}`. Other lines are ignored.

**One-shot** (`CliAdapter(["my-agent", "--prompt", "{message}"], one_shot=True)`): a new
process per turn, its argv formatted with the placeholders below. JSON event lines on stdout are
events as above; any other stdout text is the response. Exit code 0 ends the turn; anything
else is a crash. The program keeps its own conversation (use `{session}` to find it).

Placeholders (argv) and environment variables (both modes):

    {message} {turn} {session}                 MCPGYM_SESSION
    {mcp_url} {mcp_token} {server}             MCPGYM_MCP_URL MCPGYM_MCP_TOKEN MCPGYM_MCP_SERVER
                                               MCPGYM_MCP_COMMAND (stdio: a JSON argv)
    {model_url} {openai_url} {model_key} {model}
                                               MCPGYM_MODEL_URL MCPGYM_OPENAI_URL
                                               MCPGYM_MODEL_KEY MCPGYM_MODEL
    {home} {workdir}                           HOME (private), the working directory
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from mcpgym.harness.adapters.base import (
    ErrorEvent,
    HarnessCapabilities,
    McpServer,
    ModelEndpoint,
    event_adapter,
)
from mcpgym.harness.adapters.command import PersistentCommandAdapter, PerTurnCommandAdapter
from mcpgym.harness.adapters.home import EpisodeHome

__all__ = ["CliAdapter", "OneShotCliAdapter", "cli_adapter", "placeholders"]

_EVENT_TYPES = {
    "tool_call",
    "tool_result",
    "text",
    "llm_request",
    "llm_response",
    "error",
    "turn_complete",
}


def placeholders(
    home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None, session: str
) -> dict[str, str]:
    """The values a command template may use (see the module docstring)."""
    return {
        "session": session,
        "mcp_url": mcp.url or "",
        "mcp_token": mcp.bearer_token or "",
        "server": mcp.name,
        "model_url": model.anthropic_url if model else "",
        "openai_url": model.openai_url if model else "",
        "model_key": model.api_key if model else "",
        "model": model.model if model else "",
        "home": str(home.home),
        "workdir": str(home.work),
    }


def _environment(values: Mapping[str, str], mcp: McpServer) -> dict[str, str]:
    env = {f"MCPGYM_{k.upper()}": v for k, v in values.items() if k not in ("home", "workdir")}
    env = {k.replace("MCPGYM_SERVER", "MCPGYM_MCP_SERVER"): v for k, v in env.items()}
    if mcp.command:
        env["MCPGYM_MCP_COMMAND"] = json.dumps(list(mcp.command))
        env.update(mcp.env)
    return env


def _events(obj: dict[str, Any]) -> Iterable[BaseModel]:
    if obj.get("type") not in _EVENT_TYPES:
        return []
    try:
        return [event_adapter.validate_python(obj)]
    except ValidationError as exc:
        return [ErrorEvent(message=f"malformed {obj.get('type')} event: {exc.errors()[0]}")]


class CliAdapter(PersistentCommandAdapter):
    """A program speaking NDJSON turns (see the module docstring)."""

    name = "cli"
    capabilities = HarnessCapabilities(process="persistent", tool_naming="{tool}", resume=False)

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        kill_grace_s: float = 3.0,
    ) -> None:
        super().__init__(env=env, kill_grace_s=kill_grace_s)
        if not command:
            raise ValueError("CliAdapter needs a command")
        self.command = list(command)
        self._turns = 0

    def _launch(
        self, home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None
    ) -> tuple[Sequence[str], Mapping[str, str]]:
        self.session_id, self._turns = secrets.token_hex(8), 0
        values = placeholders(home, mcp, model, self.session_id)
        argv = [part.format(**values) for part in self.command]
        return argv, home.environ(_environment(values, mcp) | self.extra_env)

    def _encode(self, message: str) -> str:
        self._turns += 1
        return json.dumps({"type": "user", "message": message, "turn": self._turns})

    def _parse(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        return _events(obj)


class OneShotCliAdapter(PerTurnCommandAdapter):
    """A program started once per turn from a command template (see the module docstring)."""

    name = "cli"
    capabilities = HarnessCapabilities(process="per_turn", tool_naming="{tool}", resume=True)

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        kill_grace_s: float = 3.0,
    ) -> None:
        super().__init__(env=env, kill_grace_s=kill_grace_s)
        if not command:
            raise ValueError("OneShotCliAdapter needs a command")
        self.command = list(command)
        self._values: dict[str, str] = {}

    def _prepare(
        self, home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None
    ) -> Mapping[str, str]:
        self.session_id = secrets.token_hex(8)
        self._values = placeholders(home, mcp, model, self.session_id)
        return home.environ(_environment(self._values, mcp) | self.extra_env)

    def _argv(self, message: str, turn: int) -> Sequence[str]:
        values = self._values | {"message": message, "turn": str(turn)}
        return [part.format(**values) for part in self.command]

    def _parse(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        return _events(obj)


def cli_adapter(
    command: Sequence[str], *, one_shot: bool = False, **options: Any
) -> CliAdapter | OneShotCliAdapter:
    """`CliAdapter` (NDJSON turns) or, with `one_shot`, `OneShotCliAdapter`."""
    return OneShotCliAdapter(command, **options) if one_shot else CliAdapter(command, **options)
