"""`OpenCodeAdapter`: OpenCode (`opencode-ai`) as a harness, one process per turn.

    echo MESSAGE | opencode run --format json --pure [--model mcpgym/MODEL] [--session SESSION]

The episode's `opencode.json` (via `OPENCODE_CONFIG`, written here) declares the model provider
(`@ai-sdk/openai-compatible`: OpenAI Chat Completions at `<url>/v1` with the episode's key) and
the environment's MCP server (`"type": "remote"` with the bearer header, or `"local"` for
stdio). Facts (1.1x): the first turn's JSON events carry the `sessionID` that `--session`
resumes; the message goes through stdin (as arguments it would be re-quoted); MCP tools reach
the model as `<server>_<tool>`; it also makes side calls without tools
(a session title); `OPENCODE_DISABLE_*` variables keep it from fetching model lists, plugins and
updates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from mcpgym.harness.adapters.base import (
    ErrorEvent,
    HarnessCapabilities,
    McpServer,
    ModelEndpoint,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from mcpgym.harness.adapters.command import PerTurnCommandAdapter
from mcpgym.harness.adapters.home import EpisodeHome

__all__ = ["OpenCodeAdapter", "opencode_config"]

_BUILTIN_TOOLS = ("bash", "edit", "write", "read", "grep", "glob", "list", "patch", "webfetch")

OPENCODE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_TERMINAL_TITLE": "1",
}
"""Environment variables that keep OpenCode offline apart from the model and the tools."""


def opencode_config(
    mcp: McpServer, model: ModelEndpoint | None, builtin_tools: bool
) -> dict[str, Any]:
    """The `opencode.json` of one episode."""
    config: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
    }
    if model is not None:
        config["model"] = f"mcpgym/{model.model}"
        config["small_model"] = f"mcpgym/{model.model}"
        config["provider"] = {
            "mcpgym": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "mcpgym",
                "options": {"baseURL": model.openai_url, "apiKey": model.api_key},
                "models": {model.model: {"name": model.model}},
            }
        }
    if mcp.url:
        server: dict[str, Any] = {"type": "remote", "url": mcp.url, "headers": dict(mcp.headers)}
    else:
        server = {"type": "local", "command": list(mcp.command), "environment": dict(mcp.env)}
    config["mcp"] = {mcp.name: server | {"enabled": True}}
    if not builtin_tools:
        config["tools"] = dict.fromkeys(_BUILTIN_TOOLS, False)
    return config


class OpenCodeAdapter(PerTurnCommandAdapter):
    """OpenCode (see the module docstring).

    Args:
        executable: the `opencode` program (default: `opencode` on PATH).
        builtin_tools: keep OpenCode's own tools (bash, edit, …); default off.
        extra_args: more arguments for every `opencode run`.
    """

    name = "opencode"
    capabilities = HarnessCapabilities(
        process="per_turn",
        dialect="openai-chat",
        tool_naming="{server}_{tool}",
        resume=True,
        transports=("http", "stdio"),
    )

    def __init__(
        self,
        executable: str = "opencode",
        *,
        builtin_tools: bool = False,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kill_grace_s: float = 3.0,
    ) -> None:
        super().__init__(env=env, kill_grace_s=kill_grace_s)
        self.executable = executable
        self.builtin_tools = builtin_tools
        self.extra_args = list(extra_args)
        self._model: ModelEndpoint | None = None

    def _prepare(
        self, home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None
    ) -> Mapping[str, str]:
        self._model = model
        path = home.home / "opencode.json"
        path.write_text(json.dumps(opencode_config(mcp, model, self.builtin_tools), indent=2))
        return home.environ(OPENCODE_ENV | {"OPENCODE_CONFIG": str(path)} | self.extra_env)

    def _argv(self, message: str, turn: int) -> Sequence[str]:
        argv = [self.executable, "run", "--format", "json", "--pure", *self.extra_args]
        if self._model is not None:
            argv += ["--model", f"mcpgym/{self._model.model}"]
        if turn > 1 and self.session_id:
            argv += ["--session", self.session_id]
        return argv

    def _stdin(self, message: str) -> str:
        # A message given as arguments is re-joined with shell-style quotes around any argument
        # holding a space; read from stdin it reaches the model unchanged.
        return message

    def _parse(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        self.session_id = self.session_id or obj.get("sessionID")
        kind, part = obj.get("type"), obj.get("part") or {}
        self.session_id = self.session_id or part.get("sessionID")
        if kind == "text" and part.get("text"):
            return [TextEvent(text=part["text"])]
        if kind == "tool_use":
            return list(self._tool(part))
        if kind == "error":
            error = obj.get("error") or {}
            message = (error.get("data") or {}).get("message") or error.get("name") or obj
            return [ErrorEvent(message=str(message))]
        return []

    def _tool(self, part: dict[str, Any]) -> Iterable[BaseModel]:
        state = part.get("state") or {}
        call_id, name = part.get("callID", ""), part.get("tool", "")
        yield ToolCallEvent(id=call_id, name=name, arguments=state.get("input") or {})
        status = state.get("status")
        if status in ("completed", "error"):
            failed = status == "error"
            content = state.get("error") if failed else state.get("output")
            yield ToolResultEvent(id=call_id, name=name, content=content, is_error=failed)
