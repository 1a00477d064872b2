"""The issue's acceptance line, verbatim, in a fresh virtual environment:
`mcpgym init demo && cd demo && pytest && mcpgym validate . --level semantic`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd: list[str], cwd: Path) -> str:
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, f"{cmd}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


@pytest.mark.venv
@pytest.mark.timeout(1800)
def test_init_demo_in_a_fresh_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    bin_ = venv / "bin"
    pip = [str(bin_ / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*pip, str(ROOT)], tmp_path)  # mcpgym as a user installs it: a built wheel
    _run([str(bin_ / "mcpgym"), "init", "demo"], tmp_path)
    demo = tmp_path / "demo"
    _run([*pip, "-e", ".[dev]"], demo)
    _run([str(bin_ / "pytest"), "-q", "-p", "no:cacheprovider"], demo)
    out = _run([str(bin_ / "mcpgym"), "validate", ".", "--level", "semantic"], demo)
    assert "exit code 0" in out
    listed = _run([str(bin_ / "mcpgym"), "list", "--json"], demo)
    assert '"demo"' in listed
