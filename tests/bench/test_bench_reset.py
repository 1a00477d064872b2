"""bench/figures/_measure_reset.py runs on its own and reports every size both ways, with the
target."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_reset_measurement_reports_every_size() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench/figures/_measure_reset.py"), "--json", "--resets", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert sorted(data) == sorted(f"{k}_{n}" for k in ("task", "wire") for n in (0, 100, 1000))
    for figures in data.values():
        assert 0 < figures["p50"] <= figures["p95"]
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from figures._measure_reset import LIMIT_RESET_MS, _rows
    finally:
        sys.path.remove(str(ROOT / "bench"))
    rows = {r.key: r for r in _rows(data, 5)}
    assert rows["calendar_reset_patched_1000_ms"].limit == LIMIT_RESET_MS
    assert rows["calendar_reset_patched_1000_ms"].meets_target is (
        data["task_1000"]["p50"] <= LIMIT_RESET_MS
    )
