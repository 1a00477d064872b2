"""docs/code_gym_sandbox.md: its example runs, and its threat model names real tests."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.code

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "code_gym_sandbox.md"


def test_the_pages_python_blocks_run(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert blocks
    for block in blocks:
        out = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr[-3000:]


def test_every_test_the_threat_model_names_exists() -> None:
    """The table stays true: each named test is a test function of this folder."""
    text = PAGE.read_text()
    section = text.split("## Threat model", 1)[1].split("## What it does not", 1)[0]
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", section))
    defined = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        tree = ast.parse(path.read_text())
        defined |= {
            n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }
    assert len(named) >= 20 and named <= defined, sorted(named - defined)
