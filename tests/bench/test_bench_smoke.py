"""`just bench` smoke test: the benchmark runs end to end and reports a floor ratio."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.timeout(45)
def test_bench_quick_ws1_prints_a_ratio(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--quick",
            "--only",
            "ws1",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WS steps/s, 1 session" in proc.stdout
    assert re.search(r"\d+\.\d\dx", proc.stdout), proc.stdout  # the ratio column
    figures = json.loads(out.read_text())["figures"]
    ws1 = figures["ws1"]
    assert ws1["mcpgym"] > 0 and ws1["floor"] > 0
    assert ws1["ratio"] == pytest.approx(ws1["mcpgym"] / ws1["floor"])
    assert figures["cpu_per_step"]["mcpgym"] > 0
