"""How to run each real agent CLI headless against a capture proxy (the facts of docs/capture.md
as code): `prepare(cli, ...)` writes the CLI's config into a fresh home folder and returns the
argv, environment and working directory of one `prompt`.

    run = prepare("codex", home=tmp, base_url=proxy.base_url, key=key, prompt="Guess.",
                  mcp=McpServer("env", [sys.executable, "-m", "mcpgym.servers", "serve", ...]))
    proc = await asyncio.create_subprocess_exec(*run.argv, env=run.env, cwd=run.cwd,
                                                stdin=asyncio.subprocess.DEVNULL, ...)

CLIs are found on PATH, then in `.tools/node/bin` (what `.ci/agent-clis.sh` installs).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Cli = Literal["claude", "codex", "opencode"]
CLIS: tuple[Cli, ...] = ("claude", "codex", "opencode")

ROOT = Path(__file__).resolve().parents[2]

MODEL = {"claude": "claude-sonnet-4-5", "codex": "gpt-5-codex", "opencode": "capture/scripted"}
"""Model ids per CLI. Codex's must NOT be in its catalog (a catalog model defers MCP tools behind
tool search)."""

TOOL_NAME = {
    "claude": "mcp__{server}__{tool}",
    "codex": "mcp__{server}__{tool}",
    "opencode": "{server}_{tool}",
}
"""How each CLI names an MCP tool (Codex: `namespace` `mcp__<server>` + bare name)."""


def find_cli(cli: Cli) -> str | None:
    """The executable of `cli`, or `None` when it is not installed."""
    found = shutil.which(cli)
    if found:
        return found
    local = ROOT / ".tools" / "node" / "bin" / cli
    return str(local) if local.exists() else None


@dataclass(frozen=True, slots=True)
class McpServer:
    """An MCP server for the CLI: a stdio `command`, or a Streamable HTTP `url`."""

    name: str
    command: list[str] | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class CliRun:
    argv: list[str]
    env: dict[str, str]
    cwd: Path


def _base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8"}


def prepare(
    cli: Cli, *, home: Path, base_url: str, key: str, prompt: str, mcp: McpServer | None = None
) -> CliRun:
    """Write `cli`'s configuration under `home` and return how to run `prompt` with it.
    `base_url` is the proxy's root URL (`CaptureProxy.base_url`)."""
    exe = find_cli(cli)
    if exe is None:
        raise FileNotFoundError(f"{cli} is not installed (run .ci/agent-clis.sh)")
    work = home / "work"
    work.mkdir(parents=True, exist_ok=True)
    env = _base_env(home)
    if cli == "claude":
        env |= {
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": key,
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "IS_SANDBOX": "1",  # as root, bypassPermissions is refused without it
            "ENABLE_TOOL_SEARCH": "false",  # else MCP tools hide behind tool search
            "MCP_CONNECTION_NONBLOCKING": "0",  # else the first request goes before MCP connects
        }
        argv = [exe, "-p", prompt, "--output-format", "stream-json", "--verbose"]
        argv += ["--model", MODEL["claude"], "--permission-mode", "bypassPermissions"]
        if mcp is not None:
            if mcp.url:
                server: dict[str, object] = {"type": "http", "url": mcp.url}
            else:
                command = mcp.command or []
                server = {"command": command[0], "args": command[1:]}
            mcp_json = home / "mcp.json"
            mcp_json.write_text(json.dumps({"mcpServers": {mcp.name: server}}))
            argv += ["--mcp-config", str(mcp_json), "--strict-mcp-config"]
        return CliRun(argv, env, work)
    if cli == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        lines = [
            f'model = "{MODEL["codex"]}"',
            'model_provider = "capture"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "[model_providers.capture]",
            'name = "capture"',
            f'base_url = "{base_url}/v1"',
            'env_key = "CAPTURE_API_KEY"',
            'wire_api = "responses"',
        ]
        if mcp is not None:
            lines.append(f"[mcp_servers.{mcp.name}]")
            if mcp.url:
                lines.append(f"url = {json.dumps(mcp.url)}")
            elif mcp.command:
                lines.append(f"command = {json.dumps(mcp.command[0])}")
                lines.append(f"args = {json.dumps(mcp.command[1:])}")
            lines.append("required = true")  # wait for the server before the first request
        (codex_home / "config.toml").write_text("\n".join(lines) + "\n")
        env |= {"CODEX_HOME": str(codex_home), "CAPTURE_API_KEY": key}
        argv = [exe, "exec", "--json", "--skip-git-repo-check", prompt]
        return CliRun(argv, env, work)
    config: dict[str, object] = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "capture": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "capture",
                "options": {"baseURL": f"{base_url}/v1", "apiKey": key},
                "models": {"scripted": {"name": "scripted"}},
            }
        },
        "model": MODEL["opencode"],
    }
    if mcp is not None:
        if mcp.url:
            local: dict[str, object] = {"type": "remote", "url": mcp.url, "enabled": True}
        else:
            local = {"type": "local", "command": mcp.command, "enabled": True}
        config["mcp"] = {mcp.name: local}
    (work / "opencode.json").write_text(json.dumps(config))
    env |= {
        name: "1"
        for name in (
            "OPENCODE_DISABLE_AUTOUPDATE",
            "OPENCODE_DISABLE_MODELS_FETCH",
            "OPENCODE_DISABLE_LSP_DOWNLOAD",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS",
            "OPENCODE_DISABLE_CLAUDE_CODE",
            "OPENCODE_DISABLE_SHARE",
        )
    }
    return CliRun([exe, "run", "--format", "json", prompt], env, work)
