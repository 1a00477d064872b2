"""Claude Code against a `--token` server added without `--header`: its error points at the
missing bearer token (the 401 challenge, then `/register` refusing OAuth with a description)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers.server import run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(300)]


def test_missing_token_is_named_in_claude_codes_message(
    node_bin: Path, tool_env: dict[str, str], tmp_path: Path
) -> None:
    claude = str(node_bin / "claude")
    env = {**tool_env, "HOME": str(tmp_path)}
    with run_server(create_app(GuessEnv, mode="production", token="sek")) as server:
        add = [claude, "mcp", "add", "--transport", "http", "guess", f"{server.url}/mcp"]
        subprocess.run(add, env=env, cwd=tmp_path, check=True, capture_output=True, timeout=120)
        listed = subprocess.run(
            [claude, "mcp", "list"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    line = next(row for row in listed.stdout.splitlines() if row.startswith("guess:"))
    assert "Connected" not in line
    assert "static bearer token" in line and "Authorization: Bearer <token>" in line, line
