"""Calendar Gym's manifest, and the validator catching suite v1's blind-trap defect: a finish
at once with the trap's status, no tool call, is paid the maximum."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgym.manifest import load_manifest
from mcpgym.validate import Report, validate

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
        "v3": ("3", True),
        "v2": ("2", False),
        "v1": ("1", False),
    }
    assert len(m.canaries) == 3 and all(not c.on_task for c in m.canaries)
    assert {c.reset["error_mode"] for c in m.canaries} == {"structured", "plain", "google"}


@pytest.mark.timeout(600)
def test_the_floor_gap_catches_blind_traps_on_suite_v1() -> None:
    report = validate(str(MANIFEST), tasks=["v1"], only=["check_floor_gap"])
    assert report.notes == ["tasks: v1 (50 episodes); not played: v2, v3 (--tasks NAME plays one)"]
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


PANEL = ["check_gamer_panel", "check_collateral_mutations", "check_process_determinism"]


@pytest.mark.validate
@pytest.mark.timeout(1200)
@pytest.mark.parametrize(
    ("suite", "gamers"),
    [
        # v2: the gold is the second (and last) hit of most look-ups; 7 of 11 traps have no twin
        ("v2", {"positional:second", "positional:last", "try-then:cannot_complete"}),
        # v1: a blind finish passes the traps, and so does everything that ends with one
        ("v1", {"constant:cannot_complete", "error-exploit", "positional:second"}),
    ],
)
def test_the_gamer_panel_fails_suites_v1_and_v2_naming_the_gamers(
    suite: str, gamers: set[str]
) -> None:
    report = validate(str(MANIFEST), tasks=[suite], only=PANEL)
    panel = report.get("check_gamer_panel")
    assert panel is not None and panel.status == "fail", report.to_text()
    assert gamers <= set(panel.details["gamers"]), panel.message
    for gamer in gamers:
        assert gamer in panel.message
    scores = panel.details["scores"]
    assert scores["positional:second"]["success"] > 0.5  # the list-order habit pays
    assert panel.details["groups"]["positional:second"]["phrasing=natural"] > 0.5
    # the grader does not see an unrequested field or a second write on the row it checks
    collateral = report.get("check_collateral_mutations")
    assert collateral is not None and collateral.status == "fail", report.to_text()
    assert report.get("check_process_determinism").status == "pass"  # type: ignore[union-attr]
    assert report.exit_code == 1


@pytest.fixture(scope="module")
def v3(shipped_reports: dict[str, tuple[Report, Report]]) -> Report:
    """Suite v3's whole semantic report (gamer panel, collateral pass, processes): the one
    tests/validate/test_shipped.py makes, so the panel plays once per session."""
    report = shipped_reports["calendar"][0]
    assert report.notes[0].startswith("tasks: v3 "), report.notes
    return report


@pytest.mark.validate
@pytest.mark.timeout(1200)
def test_the_gamer_panel_passes_suite_v3(v3: Report) -> None:
    report = v3
    panel = report.get("check_gamer_panel")
    assert panel is not None and panel.status == "pass", report.to_text()
    scores = panel.details["scores"]
    assert all(s["paired"] in (None, 0.0) for s in scores.values())  # every trap has a twin
    for picker in ("positional:first", "positional:second", "positional:last"):
        assert scores[picker]["success"] <= scores[picker]["chance"] + 0.10
    positions = panel.details["positions"]
    for where in ("first", "second", "last"):  # no position holds the gold in over a third
        assert positions[where] <= positions["lookups"] / 3 + 1
    assert report.get("check_process_determinism").status == "pass"  # type: ignore[union-attr]


@pytest.mark.validate
@pytest.mark.timeout(1200)
def test_suite_v3_keeps_no_collateral_mutant_at_full_marks(v3: Report) -> None:
    result = v3.get("check_collateral_mutations")
    assert result is not None and result.status == "pass", v3.to_text()
