"""Calendar Gym's manifest, and the validator catching suite v1's blind-trap defect: a finish
at once with the trap's status, no tool call, is paid the maximum."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgym.manifest import load_manifest
from mcpgym.validate import validate

MANIFEST = Path(__file__).resolve().parents[2] / "calendar_gym" / "mcpgym.yaml"


def test_the_manifest_is_valid_and_names_the_real_entry_point() -> None:
    m = load_manifest(MANIFEST)
    assert m.entry_point == "calendar_gym:CalendarEnv"
    assert m.policies.oracle == "calendar_gym.agents:oracle"
    report = validate(str(MANIFEST), level="static", only=["check_manifest", "check_entry_point"])
    assert report.exit_code == 0, report.to_text()


def test_the_manifest_describes_suite_v2_and_keeps_v1_out_of_the_default_run() -> None:
    m = load_manifest(MANIFEST)
    assert {n: (ts.args["version"], ts.validate_) for n, ts in m.tasks.items()} == {
        "v2": ("2", True),
        "v1": ("1", False),
    }
    assert len(m.canaries) == 3 and all(not c.on_task for c in m.canaries)
    assert {c.reset["error_mode"] for c in m.canaries} == {"structured", "plain", "google"}


@pytest.mark.timeout(600)
def test_the_floor_gap_catches_blind_traps_on_suite_v1() -> None:
    report = validate(str(MANIFEST), tasks=["v1"], only=["check_floor_gap"])
    assert report.notes == ["tasks: v1 (50 episodes); not played: v2 (--tasks NAME plays one)"]
    # (suite v1 is frozen: its 50 tasks never change)
    result = report.get("check_floor_gap")
    assert result is not None and result.status == "fail", report.to_text()
    paid = result.details["episodes"]
    assert any(
        p.startswith('finish({"status": "cannot_complete"') and "t4-perm-" in p for p in paid
    )
    assert any('"needs_clarification"' in p and "t4-ambig-" in p for p in paid)
    assert all("t4-" in p for p in paid)  # only traps: solvable tasks pay nothing blind
    assert report.exit_code == 1
