"""Fixtures for the tests that drive mcpgym with npm tools: the MCP conformance suite, the MCP
Inspector CLI and Claude Code, installed by `.ci/node-tools.sh` into `.tools/node/`.

Without those tools the tests skip with the command to run, except in CI (`CI=true`), where a
missing tool is a failure: CI must never pass by skipping the proof.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.npm import Served, serve

ROOT = Path(__file__).resolve().parents[2]
NODE_TOOLS = Path(os.environ.get("MCPGYM_NODE_TOOLS", ROOT / ".tools" / "node"))
EVERYTHING = "mcpgym.examples.everything:EverythingEnv"
GUESS = "mcpgym.examples.guess:GuessEnv"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def node_bin() -> Path:
    """`.tools/node/bin` (Node 22 and wrappers for every npm tool the tests run)."""
    wanted = ["node", "conformance", "conformance-alpha", "mcp-inspector", "claude"]
    missing = [name for name in wanted if not (NODE_TOOLS / "bin" / name).exists()]
    if missing:
        message = (
            f"npm tools missing from {NODE_TOOLS}/bin ({', '.join(missing)}): run .ci/node-tools.sh"
        )
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return NODE_TOOLS / "bin"


@pytest.fixture(scope="session")
def tool_env(node_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for the npm tools: Node 22 first on PATH, a throwaway HOME, no telemetry,
    no auto-update, no colours."""
    home = tmp_path_factory.mktemp("home")
    return {
        **os.environ,
        "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "npm_config_update_notifier": "false",
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
    }


@pytest.fixture(scope="session")
def everything(node_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The conformance fixture, served in production mode by the real command line."""
    with serve(EVERYTHING, tmp_path_factory.mktemp("everything"), "--mode", "production") as served:
        yield served
