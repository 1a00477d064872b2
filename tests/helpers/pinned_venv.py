"""A virtual environment holding one pinned distribution, built once and kept (suites whose
library cannot share mcpgym's venv: openenv 0.10.0, openreward 0.1.167)."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path


def pinned_venv(where: Path, dist: str, version: str) -> Path:
    """The Python of a venv at `where` with `dist==version` installed (kept when it has it)."""
    python = where / "bin" / "python"
    probe = [
        str(python),
        "-c",
        f"import importlib.metadata as m; assert m.version({dist!r}) == {version!r}",
    ]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, f"{dist}=={version}"], check=True)
    subprocess.run(probe, check=True)
    return python
