"""The environments mcpgym ships pass every level, twice with the same report: Calendar Gym on
suite v2 (addressed by its registered name) and every example with a manifest. Calendar's
canary bites: a secret the acting user may read is reported by the containment check.

`mcpgym.examples.everything` is not here: it is the MCP conformance fixture (protocol test
tools, no task and no reward), not an environment whose reward could be validated."""

from __future__ import annotations

from pathlib import Path

import pytest
from shipped import EXAMPLES, SHIPPED

from mcpgym.manifest import load_manifest
from mcpgym.validate import CHECKS, Report, validate

ROOT = Path(__file__).resolve().parents[2]
TARGETS = SHIPPED

pytestmark = [pytest.mark.validate, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def reports(shipped_reports: dict[str, tuple[Report, Report]]) -> dict[str, tuple[Report, Report]]:
    return shipped_reports  # validated once per session (conftest.py), shared with test_calendar


def test_every_example_manifest_is_covered() -> None:
    assert EXAMPLES == ["guess.mcpgym.yaml"]  # a new example's manifest joins TARGETS by itself
    assert set(TARGETS) == {"calendar", "guess"}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_passes_every_level_twice_with_the_same_report(
    name: str, reports: dict[str, tuple[Report, Report]]
) -> None:
    first, second = reports[name]
    assert first.exit_code == 0, first.to_text()
    assert len(first.results) == len(CHECKS)
    # nothing skipped: the canary, the oracle and the null policy are all declared
    assert {r.status for r in first.results} <= {"pass", "n/a"}, first.to_text()
    assert first.deterministic_dict() == second.deterministic_dict(), name
    assert first.timings.keys() == second.timings.keys()


def test_calendar_plays_suite_v3_and_says_what_it_sampled(
    reports: dict[str, tuple[Report, Report]],
) -> None:
    from calendar_gym.tasks.loader import load_suite

    report, n = reports["calendar"][0], len(load_suite("3"))  # one episode per task
    assert report.notes == [
        f"tasks: v3 ({n} episodes); not played: v1, v2 (--tasks NAME plays one)"
    ]
    assert report.get("check_floor_gap").message.startswith(f"all {n} episodes")  # type: ignore[union-attr]
    assert report.get("check_oracle_reaches_max").message == f"{n} episodes at 1"  # type: ignore[union-attr]
    for name in ("check_verifier_determinism", "check_replay", "check_random_floor"):
        assert f"5 of {n} episodes (sampled, seed 0)" in report.get(name).message  # type: ignore[union-attr]
    assert report.get("check_no_leakage").message == "3 canaries"  # type: ignore[union-attr]


def test_calendars_canary_catches_a_secret_the_agent_can_read() -> None:
    """The positive control: the same secret event, but not private, on a calendar alice reads
    (Bob's): events_list shows its details, and the containment check says so."""
    m = load_manifest(ROOT / "calendar_gym" / "mcpgym.yaml")
    canary = m.canaries[0]
    event = {k: v for k, v in canary.template["events"][0].items() if k != "visibility"}
    readable = canary.model_copy(update={"template": {**canary.template, "events": [event]}})
    report = validate(
        manifest=m.model_copy(update={"canaries": [readable]}),
        only=["check_oracle_containment", "check_no_leakage"],
    )
    result = report.get("check_oracle_containment")
    assert result is not None and result.status == "fail", report.to_text()
    assert result.message == "tool 'events_list' returned the planted answer"
    assert report.get("check_no_leakage").status == "pass"  # type: ignore[union-attr]
