"""`just bench-reliability` can fail: every environment it serves resolves from the repository
root (a moved module once made three stall figures crash instead of measuring), and an acceptance
figure that misses its target is marked ✗ and fails the run."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from mcpgym.targets import import_target

ROOT = Path(__file__).resolve().parents[2]
SERVED = re.compile(r"""running\(\s*["']([\w.]+:\w+)["']""")


@pytest.fixture(scope="module")
def hostile() -> Iterator[ModuleType]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from hostile import _stall, _stall_scenarios

        yield _stall
        assert _stall_scenarios.HANG_ENV
    finally:
        sys.path.remove(str(ROOT / "bench"))


def test_every_environment_the_bench_serves_resolves(hostile: ModuleType) -> None:
    sources = [ROOT / "bench" / "reliability.py", *(ROOT / "bench" / "hostile").glob("*.py")]
    targets = {t for path in sources for t in SERVED.findall(path.read_text())}
    from hostile._stall_scenarios import HANG_ENV

    targets.add(HANG_ENV)
    assert len(targets) >= 3, targets
    for target in targets:
        assert import_target(target, str(ROOT)) is not None, target


def test_a_missed_target_is_marked_and_fails_the_run(hostile: ModuleType) -> None:
    assert hostile.judge("5.3 ms", "< 100", True).endswith("✓")
    assert hostile.judge("182.0 ms", "< 100", False) == "182.0 ms (target < 100) ✗"
    seen = hostile.Stall(worst=300.0, p99=150.0, calls=40, after=None)
    p99_row = hostile.stall_rows("x", seen)[0][1]
    assert p99_row.endswith("✗")
    source = (ROOT / "bench" / "reliability.py").read_text()
    assert 'value.endswith("✗")' in source and "return 1 if failed or missed" in source
