"""Code Gym's faces: production `/mcp` with the official client (a workspace per principal),
`mcpgym eval` over a pool of two servers with a reference agent and a report,
`mcpgym validate --level semantic`."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from code_gym import CodeEnv
from helpers.server import run_server
from mcpgym.servers import create_app
from mcpgym.validate import validate

pytestmark = [pytest.mark.code, pytest.mark.server]

PRINCIPALS: dict[str, dict[str, Any]] = {"tok-ann": {}, "tok-ben": {}}


@contextlib.asynccontextmanager
async def connect(url: str, token: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as h:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=h)) as client:
            yield client


async def call(client: Client, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, args)
    return bool(result.is_error), dict(result.structured_content or {})


async def test_production_mcp_is_a_sandboxed_workspace_per_principal() -> None:
    app = create_app(CodeEnv, mode="production", principals=PRINCIPALS)
    with run_server(app) as server:
        async with connect(server.url, "tok-ann") as ann, connect(server.url, "tok-ben") as ben:
            names = sorted(t.name for t in (await ann.list_tools()).tools)
            assert names == ["list_files", "read_file", "run_python", "run_tests", "write_file"]
            failed, out = await call(ann, "run_python", code="print(6 * 7)")
            assert not failed and out["stdout"] == "42\n"
            failed, _ = await call(ann, "write_file", path="notes.py", content="x = (\n")
            assert not failed
            failed, out = await call(ann, "run_python", file="notes.py")
            assert not failed and out["ok"] is False
            assert (out["error"]["type"], out["error"]["file"]) == ("SyntaxError", "notes.py")
            failed, listed = await call(ben, "list_files")
            assert not failed and listed == {"files": []}  # another principal, another sandbox
            failed, bad = await call(ann, "read_file", path="/etc/passwd")
            assert failed and bad["error"]["code"] == "INVALID_PATH"
            failed, env = await call(ann, "run_python", code="import os; print(sorted(os.environ))")
            assert "tok-ann" not in json.dumps(env)


def test_mcpgym_eval_measures_the_error_mode_ablation(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    cmd = [
        sys.executable,
        "-m",
        "mcpgym.servers",
        "eval",
        "--env",
        "code_gym:CodeEnv",
        "--agent",
        "code-naive",
        "--tasks",
        "code_gym.suite:quick",
        "--out",
        str(out),
        "--quiet",
        "--concurrency",
        "2",
        "--pool",
        "process:2",  # two `mcpgym serve` servers, each sandboxing its own sessions
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    by_mode: dict[str, list[float]] = {}
    for row in rows:
        by_mode.setdefault(row["tags"]["error_mode"], []).append(row["reward_final"])
    assert len(rows) == 16
    assert by_mode["structured"] == [1.0] * 8 and by_mode["plain"] == [0.0] * 8
    report = (out / "report.md").read_text()
    assert "error_mode" in report and "structured" in report


@pytest.mark.timeout(900)
def test_validate_semantic_passes_on_the_repository_tier() -> None:
    """The full run (all 167 tasks) takes minutes; `--tasks repo` plays every check."""
    report = validate("code_gym:CodeEnv", level="semantic", tasks=["repo"])
    assert report.exit_code == 0, report.to_text()
