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
@pytest.mark.timeout(75)
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
        timeout=60,  # three servers: the floor, the old h11 floor and mcpgym
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WS steps/s, 1 session" in proc.stdout
    assert re.search(r"\d+\.\d\dx", proc.stdout), proc.stdout  # the ratio column
    figures = json.loads(out.read_text())["figures"]
    ws1 = figures["ws1"]
    assert ws1["mcpgym"] > 0 and ws1["floor"] > 0
    assert ws1["ratio"] == pytest.approx(ws1["mcpgym"] / ws1["floor"])
    assert figures["cpu_per_step"]["mcpgym"] > 0
    assert figures["ws1"]["floor_h11"] > 0  # the old asyncio/h11 floor, a second column
    table = json.loads(out.read_text())["issue_table"]
    line = next(t for t in table if t["figure"] == "WS call_tool step, server CPU")
    assert line["target"] == "≤ 2.0x" and line["met"] in (True, False)


@pytest.mark.timeout(60)
def test_instruction_counts_are_skipped_with_a_reason_without_valgrind(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    run_py = str(ROOT / "bench" / "run.py")
    proc = subprocess.run(
        [sys.executable, run_py, "--quick", "--only", "instructions", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=50,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path)},  # no valgrind on this PATH
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    for key in ("ws_instr", "ws_instr_pool", "mcp_instr"):
        assert data["figures"][key]["mcpgym"] is None
        assert (
            "skipped: valgrind and callgrind_control not installed" in data["figures"][key]["note"]
        )
    assert any("skipped" in t["note"] for t in data["issue_table"])
