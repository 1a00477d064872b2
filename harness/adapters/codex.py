"""`CodexAdapter`: OpenAI Codex CLI (`@openai/codex`) as a harness, one process per turn.

    codex exec --json --skip-git-repo-check [-m MODEL] PROMPT               # turn 1
    codex exec resume --json --skip-git-repo-check [-m MODEL] SESSION PROMPT   # later turns

`CODEX_HOME` is the episode's private folder; its `config.toml` (written here) names the model
provider (the OpenAI Responses API at `<url>/v1`, key from `MCPGYM_MODEL_KEY`, no retries), the
environment's MCP server (`[mcp_servers.<name>]`, HTTP with the bearer token from
`MCPGYM_MCP_TOKEN`, or stdio; `required` so the first request waits for it; its tools approved
without asking), `approval_policy = "never"` and a read-only sandbox. Facts (0.17x):

- a model id from Codex's own catalog turns on tool search, which defers MCP tools out of the
  model's tool list: ask for an id it does not know (a capture `Upstream(model=...)` can rename
  it for the real API); an unknown id costs one harmless "Model metadata ... not found" item;
- `thread.started` carries the session id that `exec resume` takes;
- MCP tools reach the model grouped under the namespace `mcp__<server>` (the call items name
  server and tool apart);
- stdin must not be a pipe left open (Codex reads extra input from it), so it is /dev/null.
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

__all__ = ["CodexAdapter", "codex_config"]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def codex_config(mcp: McpServer, model: ModelEndpoint | None, tool_timeout_s: float) -> str:
    """The `config.toml` of one episode."""
    lines = ['approval_policy = "never"', 'sandbox_mode = "read-only"']
    if model is not None:
        lines += [f"model = {_toml(model.model)}", 'model_provider = "mcpgym"']
    lines.append("")
    if model is not None:
        provider = {
            "name": "mcpgym",
            "base_url": model.openai_url,
            "env_key": "MCPGYM_MODEL_KEY",
            "wire_api": "responses",
            "request_max_retries": 0,
            "stream_max_retries": 0,
        }
        lines.append("[model_providers.mcpgym]")
        lines += [f"{k} = {_toml(v)}" for k, v in provider.items()]
        lines.append("")
    server: dict[str, Any] = {
        "tool_timeout_sec": tool_timeout_s,
        "default_tools_approval_mode": "approve",
        "required": True,
    }
    if mcp.url:
        server |= {"url": mcp.url}
        if mcp.bearer_token:
            server["bearer_token_env_var"] = "MCPGYM_MCP_TOKEN"
    else:
        command, *args = mcp.command
        server |= {"command": command, "args": args, "env": dict(mcp.env)}
    lines.append(f"[mcp_servers.{json.dumps(mcp.name)}]")
    lines += [f"{k} = {_toml(v)}" for k, v in server.items()]
    return "\n".join(lines) + "\n"


def _result_content(result: Any) -> Any:
    """An MCP result as Codex reports it: its structured content, else its text."""
    if not isinstance(result, dict):
        return result
    if result.get("structured_content") is not None:
        return result["structured_content"]
    blocks = result.get("content") or []
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict))


class CodexAdapter(PerTurnCommandAdapter):
    """Codex CLI (see the module docstring).

    Args:
        executable: the `codex` program (default: `codex` on PATH).
        extra_args: more arguments for every `codex exec`.
        tool_timeout_s: Codex's per-tool-call timeout for the environment's tools.
    """

    name = "codex"
    capabilities = HarnessCapabilities(
        process="per_turn",
        dialect="openai-responses",
        tool_naming="mcp__{server}__{tool}",
        resume=True,
        transports=("http", "stdio"),
    )

    def __init__(
        self,
        executable: str = "codex",
        *,
        extra_args: Sequence[str] = (),
        tool_timeout_s: float = 300.0,
        env: Mapping[str, str] | None = None,
        kill_grace_s: float = 3.0,
    ) -> None:
        super().__init__(env=env, kill_grace_s=kill_grace_s)
        self.executable = executable
        self.extra_args = list(extra_args)
        self.tool_timeout_s = tool_timeout_s
        self._model: ModelEndpoint | None = None

    def _prepare(
        self, home: EpisodeHome, mcp: McpServer, model: ModelEndpoint | None
    ) -> Mapping[str, str]:
        self._model = model
        (home.home / "config.toml").write_text(codex_config(mcp, model, self.tool_timeout_s))
        env = {"CODEX_HOME": str(home.home), "NO_COLOR": "1", "RUST_LOG": "error"}
        if model is not None:
            env["MCPGYM_MODEL_KEY"] = model.api_key
        if mcp.bearer_token:
            env["MCPGYM_MCP_TOKEN"] = mcp.bearer_token
        return home.environ(env | self.extra_env)

    def _argv(self, message: str, turn: int) -> Sequence[str]:
        common = ["--json", "--skip-git-repo-check", *self.extra_args]
        if self._model is not None:
            common += ["-m", self._model.model]
        if turn == 1 or not self.session_id:
            return [self.executable, "exec", *common, "--", message]
        return [self.executable, "exec", "resume", *common, "--", self.session_id, message]

    def _parse(self, obj: dict[str, Any]) -> Iterable[BaseModel]:
        kind = obj.get("type")
        if kind == "thread.started":
            self.session_id = obj.get("thread_id") or self.session_id
        elif kind in ("item.started", "item.completed"):
            return list(self._item(kind, obj.get("item") or {}))
        elif kind == "turn.failed":
            message = (obj.get("error") or {}).get("message", "the turn failed")
            return [ErrorEvent(message=str(message))]
        elif kind == "error":
            return [ErrorEvent(message=str(obj.get("message", "")))]
        return []

    def _item(self, kind: str, item: dict[str, Any]) -> Iterable[BaseModel]:
        item_type = item.get("type")
        if item_type == "mcp_tool_call":
            name = self.capabilities.tool_name(item.get("server", ""), item.get("tool", ""))
            if kind == "item.started":
                yield ToolCallEvent(
                    id=item.get("id", ""), name=name, arguments=item.get("arguments") or {}
                )
            else:
                error = item.get("error")
                content = error if error else _result_content(item.get("result"))
                yield ToolResultEvent(
                    id=item.get("id", ""),
                    name=name,
                    content=content,
                    is_error=bool(error) or item.get("status") == "failed",
                )
        elif kind == "item.completed" and item_type == "agent_message":
            yield TextEvent(text=item.get("text", ""))
        elif kind == "item.completed" and item_type == "error":
            yield ErrorEvent(message=item.get("message", ""))
