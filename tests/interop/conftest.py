"""Fixtures of the interop suite: the released openenv 0.10.0 in its own virtual environment,
and a small OpenEnv server run by that environment's Python."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.pinned_venv import pinned_venv

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MCPGYM_OPENENV_VENV", ROOT / ".tools" / "openenv-venv"))
OPENENV = "openenv==0.10.0"


@pytest.fixture(scope="session")
def openenv_python() -> Path:
    """A virtual environment holding openenv 0.10.0 (built once, kept in .tools/)."""
    return pinned_venv(VENV, {"openenv": "0.10.0"})
