"""`ClaudeCodeAdapter`: Claude Code (`@anthropic-ai/claude-code`) as a harness.

One persistent process per episode:

    claude -p --input-format stream-json --output-format stream-json --verbose
           --mcp-config '{"mcpServers": {"env": ...}}' --strict-mcp-config --tools ""
           --permission-mode bypassPermissions --model MODEL

Each user message is one stdin line `{"type": "user", "message": {"role": "user", "content":
...}}`; the turn ends with the `{"type": "result", ...}` line. Facts this relies on (2.1.x):

- `ENABLE_TOOL_SEARCH=false`, or MCP tools hide behind a tool-search tool and the model never
  sees them in its tool list; `MCP_CONNECTION_NONBLOCKING=0`, or the first model request may
  go out before the MCP server is connected;
- as root, `bypassPermissions` is refused unless `IS_SANDBOX=1`;
- `--tools ""` removes the built-in tools (Bash, Edit, …): the model sees only the
  environment's tools, named `mcp__<server>__<tool>` (`builtin_tools=` re-enables some);
- the model endpoint is `ANTHROPIC_BASE_URL` + `ANTHROPIC_API_KEY` (Messages API, streamed);
- `DISABLE_AUTOUPDATER`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` keep it offline otherwise.
"""

from __future__ import annotations

import json
import os
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
    TurnComplete,
)
from mcpgym.harness.adapters.command import PersistentCommandAdapter
from mcpgym.harness.adapters.home import EpisodeHome

__all__ = ["ClaudeCodeAdapter", "claude_mcp_config"]


def claude_mcp_config(mcp: McpServer) -> dict[str, Any]:
    """The `--mcp-config` JSON for one server (HTTP with headers, or stdio)."""
    if mcp.url:
        server: dict[str, Any] = {"type": "http", "url": mcp.url, "headers": dict(mcp.headers)}
    else:
        command, *args = mcp.command
        server = {"type": "stdio", "command": command, "args": args, "env": dict(mcp.env)}
    return {"mcpServers": {mcp.name: server}}


def _content_text(content: Any) -> Any:
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict)]
        return "\n".join(t for t in texts if t)
    return content


class ClaudeCodeAdapter(PersistentCommandAdapter):
    """Claude Code in stream-json mode (see the module docstring).

    Args:
        executable: the `claude` program (default: `claude` on PATH).
        builtin_tools: Claude Code's own tools to keep (`""`: none, `"default"`: all).
        system_prompt: appended to Claude Code's system prompt.
        extra_args: more command-line arguments.
        env: more environment variables for the process.
    """

    name = "claude-code"
    capabilities = HarnessCapabilities(
        process="persistent",
        dialect="anthropic",
        tool_naming="mcp__{server}__{tool}",
        resume=True,
        transports=("http", "stdio"),
    )

    def __init__(
        self,
        executable: str = "claude",
        *,
        builtin_tools: str = "",
        system_prompt: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        kill_grace_s: float = 3.0,
    ) -> None:
        super().__init__(env=env, kill_grace_s=kill_grace_s)
        self.executable = executable
        self.builtin_tools = builtin_tools
        self.system_prompt = system_prompt
        self.extra_args = list(extra_args)
        self._tool_names: dict[str, str] = {}

    def _launch(
        self, home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None
    ) -> tuple[Sequence[str], Mapping[str, str]]:
        argv = [
            self.executable,
            "-p",
            "--input-format=stream-json",
            "--output-format=stream-json",
            "--verbose",
            "--mcp-config",
            json.dumps(claude_mcp_config(mcp)),
            "--strict-mcp-config",
            f"--tools={self.builtin_tools}",
            "--permission-mode=bypassPermissions",
        ]
        if model is not None:
            argv.append(f"--model={model.model}")
        if self.system_prompt:
            argv += ["--append-system-prompt", self.system_prompt]
        env = {
            "ENABLE_TOOL_SEARCH": "false",
            "MCP_CONNECTION_NONBLOCKING": "0",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        }
        if os.geteuid() == 0:
            env["IS_SANDBOX"] = "1"
        if model is not None:
            env |= {"ANTHROPIC_BASE_URL": model.anthropic_url, "ANTHROPIC_API_KEY": model.api_key}
        return argv + self.extra_args, home.environ(env | self.extra_env)

    def _encode(self, message: str) -> str:
        line: dict[str, Any] = {
            "type": "user",
            "message": {"role": "user", "content": message},
            "parent_tool_use_id": None,
        }
        if self.session_id:
            line["session_id"] = self.session_id
        return json.dumps(line)

    def _parse(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        kind = obj.get("type")
        self.session_id = obj.get("session_id") or self.session_id
        if kind == "assistant":
            return list(self._assistant(obj))
        if kind == "user":
            return list(self._tool_results(obj))
        if kind == "result":
            is_error = bool(obj.get("is_error")) or obj.get("subtype") != "success"
            response = obj.get("result")
            events: list[BaseModel] = []
            if is_error:
                errors = obj.get("errors") or [f"turn ended with {obj.get('subtype')}"]
                events.append(ErrorEvent(message="; ".join(map(str, errors))))
            text = response if isinstance(response, str) else ""
            events.append(TurnComplete(response=text, session_id=self.session_id))
            return events
        if kind == "system" and obj.get("subtype") == "api_retry":
            status = obj.get("error_status")
            return [ErrorEvent(message=f"model API error {status}: {obj.get('error')}; retrying")]
        return []

    def _assistant(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        for block in (obj.get("message") or {}).get("content") or []:
            if block.get("type") == "text" and block.get("text"):
                yield TextEvent(text=block["text"])
            elif block.get("type") == "tool_use":
                self._tool_names[block.get("id", "")] = block.get("name", "")
                yield ToolCallEvent(
                    id=block.get("id", ""),
                    name=block.get("name", ""),
                    arguments=block.get("input") or {},
                )

    def _tool_results(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        content = (obj.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id", "")
                yield ToolResultEvent(
                    id=call_id,
                    name=self._tool_names.get(call_id, ""),
                    content=_content_text(block.get("content")),
                    is_error=bool(block.get("is_error")),
                )
