"""Each broken fixture fails exactly the check meant to catch its defect; the good one passes
every level; reports repeat exactly apart from timings.

By default each fixture is validated once, up to the level its defect lives at (several run at
once); `just test-validate` validates every fixture twice at every level."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from vault import DEFECTS, PANEL_ALSO, manifest

from mcpgym.manifest import Manifest
from mcpgym.validate import CHECKS, Report, validate

LEVEL_OF = {c.name: c.level for c in CHECKS}
# the default run: the fast static defects and one defect of each kind the servers show; the
# `validate` marker runs every defect, twice, at every level
DEFAULT = [
    "manifest typo",
    "unknown key",
    "no oracle",
    "reserved tool name",
    "undeclared tool",
    "blind finish paid the max",
    "reward is NaN",
    "a crash on bad input",
    "state carried across episodes",
    "answer in an error hint",
]
# each validation serves the environment for real: the module's reports take minutes
pytestmark = pytest.mark.timeout(900)


def _validate(target: Path | Manifest, level: Any = "semantic") -> Report:
    if isinstance(target, Manifest):
        return validate(manifest=target, level=level)
    return validate(str(target), level=level)


def _failing(report: Report) -> list[str]:
    return [r.name for r in report.results if r.status in ("fail", "error")]


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    jobs = {name: (DEFECTS[name][0], LEVEL_OF[DEFECTS[name][1]]) for name in DEFAULT}
    jobs["good"] = (manifest(), "semantic")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_validate, t, lvl) for name, (t, lvl) in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def test_the_good_fixture_passes_every_level(reports: dict[str, Report]) -> None:
    report = reports["good"]
    assert _failing(report) == [], report.to_text()
    assert report.exit_code == 0
    assert {r.status for r in report.results} <= {"pass", "n/a"}
    assert len(report.results) == len(CHECKS)


@pytest.mark.parametrize("defect", DEFAULT)
def test_a_defect_fails_exactly_its_check(defect: str, reports: dict[str, Report]) -> None:
    report = reports[defect]
    check = DEFECTS[defect][1]
    assert _failing(report) == _expected(defect), report.to_text()
    result = report.get(check)
    assert result is not None and result.message and result.fix
    want = 2 if check == "check_manifest" else 1
    assert report.exit_code == want, report.to_text()


def _expected(defect: str) -> list[str]:
    """The checks `defect` must fail: its own, and the gamer panel where a gamer exploits it."""
    return [DEFECTS[defect][1], *(["check_gamer_panel"] if defect in PANEL_ALSO else [])]


def test_the_panel_names_the_gamers_that_exploit_a_defect(reports: dict[str, Report]) -> None:
    for defect in [d for d in DEFAULT if d in PANEL_ALSO]:
        panel = reports[defect].get("check_gamer_panel")
        assert panel is not None and panel.status == "fail", defect
        assert PANEL_ALSO[defect] <= set(panel.details["gamers"]), panel.message


def test_reports_repeat_apart_from_timings(reports: dict[str, Report]) -> None:
    for name in ("good", "a crash on bad input"):
        target, check = DEFECTS.get(name, (manifest(), "check_replay"))
        again = _validate(target, LEVEL_OF[check] if name != "good" else "semantic")
        assert again.deterministic_dict() == reports[name].deterministic_dict(), name


@pytest.fixture(scope="module")
def twice() -> dict[str, tuple[Report, Report]]:
    targets = {"good": manifest(), **{name: t for name, (t, _) in DEFECTS.items()}}
    # two at a time: the validator's time limits are real ones, and a crowded machine breaks them
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {n: pool.submit(_twice, t) for n, t in targets.items()}
        return {n: f.result() for n, f in futures.items()}


def _twice(target: Path | Manifest) -> tuple[Report, Report]:
    return _validate(target), _validate(target)


@pytest.mark.validate
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("defect", ["good", *sorted(DEFECTS)])
def test_every_fixture_twice_at_every_level(
    defect: str, twice: dict[str, tuple[Report, Report]]
) -> None:
    first, second = twice[defect]
    assert _failing(first) == (_expected(defect) if defect in DEFECTS else []), first.to_text()
    differ = [
        (a.name, a.status, a.message, b.status, b.message)
        for a, b in zip(first.results, second.results, strict=True)
        if (a.status, a.message, a.fix, a.details) != (b.status, b.message, b.fix, b.details)
    ]
    assert differ == [], defect
    assert first.deterministic_dict() == second.deterministic_dict(), defect
