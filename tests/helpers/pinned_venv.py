"""A virtual environment holding pinned distributions, built once and kept (suites whose
libraries cannot share mcpgym's venv: openenv 0.10.0, openreward 0.1.167, verifiers 0.4.0 with
openenv-core 0.3.0)."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path


def pinned_venv(where: Path, pins: dict[str, str]) -> Path:
    """The Python of a venv at `where` with every `dist==version` of `pins` installed (kept when
    it already has them)."""
    python = where / "bin" / "python"
    check = "; ".join(f"assert m.version({d!r}) == {v!r}" for d, v in pins.items())
    probe = [str(python), "-c", f"import importlib.metadata as m; {check}"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *(f"{d}=={v}" for d, v in pins.items())], check=True)
    subprocess.run(probe, check=True)
    return python
