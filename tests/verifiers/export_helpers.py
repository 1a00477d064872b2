"""Helpers of the verifiers suite: `mcpgym export verifiers` into a package installed for the
verifiers venv, and what mcpgym's own client gets for the same calls."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mcpgym.client.generic import SyncGenericEnvClient

__all__ = ["export", "install", "ours"]


def export(url: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "mcpgym.servers", "export", "verifiers", url, "--out", str(out)]
    return subprocess.run([*cmd, *extra], capture_output=True, text=True, timeout=300, check=False)


def install(python: Path, out: Path, url: str, *args: str) -> Path:
    """Export URL into `out/pkg` and install it into `out/site` (on the driver's and vf-eval's
    `PYTHONPATH`), with the uv of the verifiers venv (built with uv: it has no pip)."""
    done = export(url, out / "pkg", *args)
    assert done.returncode == 0, done.stderr
    uv = [str(python.parent / "uv"), "pip", "install", "--quiet", "--python", str(python)]
    target = [*uv, "--no-deps", "--target", str(out / "site"), str(out / "pkg")]
    subprocess.run(target, check=True, timeout=300)
    return out / "site"


def ours(url: str, reset: dict[str, Any], calls: list[Any], token: str | None = None) -> Any:
    """mcpgym's own client: the reset's prompt, the answers to `calls` (until done) as the MCP
    tools' JSON text, and the summed reward."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    with SyncGenericEnvClient(url, headers=headers) as env:
        first = env.reset(**reset)
        total, answers = first.reward or 0.0, []
        for name, arguments in calls:
            step = env.call_tool(name, arguments)
            obs = step.observation
            answers.append(obs["result"] if obs.get("error") is None else obs["error"])
            total += step.reward or 0.0
            if step.done:
                break
        metadata = first.observation.get("metadata") or {}
        return metadata.get("prompt"), answers, total
