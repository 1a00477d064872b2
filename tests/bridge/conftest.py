"""Fixtures of the bridge suite: the worker venvs (openenv 0.10.0, verifiers 0.3.1, verifiers
0.4.0) built by .ci/bridge-venvs.sh under build/bridge/, and the suite's fixture folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
VENVS = ROOT / "build" / "bridge"


@pytest.fixture(scope="session")
def worker_venvs() -> dict[str, Path]:
    """`{"openenv", "openenv-core", "mcpgym-openenv-core", "verifiers031", "verifiers040"}` → the
    venv's Python (built when missing; mcpgym-openenv-core holds mcpgym itself too)."""
    subprocess.run(["bash", str(ROOT / ".ci" / "bridge-venvs.sh")], check=True, timeout=1500)
    return {
        name: VENVS / name / "bin" / "python"
        for name in (
            "openenv",
            "openenv-core",
            "mcpgym-openenv-core",
            "verifiers031",
            "verifiers040",
        )
    }
