"""docs/performance.md is generated from one recorded `just bench --json` run
(docs/data/bench.json) by scripts/docs_performance.py: the page is what that run gives, its prose
holds no number of its own, and the run is a complete, real one (issue 29: the page claimed a CPU
per step "flat from K = 100 to 1,000" that no independent run reproduced)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import docs_performance as page  # noqa: E402


def test_the_page_is_generated_from_the_recorded_run() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "docs_performance.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_number_on_the_page_comes_from_the_run_or_the_code() -> None:
    """The template's prose holds no figure: each number on the page is a field filled from
    the run (or a constant read from the code), apart from the named non-figures."""
    assert set(page.literal_numbers()) <= set(page.NOT_FIGURES), page.literal_numbers()
    data = page._load()
    text = page.PAGE.read_text()
    for key, figure in data["figures"].items():
        if figure["mcpgym"] is not None:
            shown = page._v(figure)
            assert f"| {figure['label']} | {shown} |" in text, (key, shown)


def test_the_cpu_per_step_is_stated_against_the_floor_of_the_same_run() -> None:
    data = page._load()
    text = page.PAGE.read_text()
    assert "flat from" not in text
    for tag in ("k", "pool"):
        low, high = (data["figures"][f"ws{tag}{k}_cpu"] for k in (100, 1000))
        ratios = [f["mcpgym"] / f["floor"] for f in (low, high)]
        assert f"{ratios[0]:.2f}x the floor at K = 100 and {ratios[1]:.2f}x at K = 1,000" in text


def test_the_recorded_run_is_a_whole_bench_run() -> None:
    data = page._load()
    meta = data["meta"]
    assert meta["command"].startswith("python bench/run.py")
    assert not meta["quick"] and data["errors"] == {}, data["errors"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", meta["started_utc"])
    assert data["issue_table"], "the run printed issue 17's table"
