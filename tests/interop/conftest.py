"""Fixtures of the interop suite: the released openenv 0.10.0 in its own virtual environment,
and a small OpenEnv server run by that environment's Python."""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MCPGYM_OPENENV_VENV", ROOT / ".tools" / "openenv-venv"))
OPENENV = "openenv==0.10.0"


@pytest.fixture(scope="session")
def openenv_python() -> Path:
    """A virtual environment holding openenv 0.10.0 (built once, kept in .tools/)."""
    python = VENV / "bin" / "python"
    probe = [
        str(python),
        "-c",
        "import importlib.metadata as m; assert m.version('openenv') == '0.10.0'",
    ]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, OPENENV], check=True)
    subprocess.run(probe, check=True)
    return python
