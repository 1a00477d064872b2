"""The gamer panel: each broken Desk is beaten by the gamer meant to catch it, and the panel
fails naming that gamer with its score; the good Desk passes every gamer, the collateral pass
and the cross-process check; thresholds come from the manifest and `--gate`.

Each validation runs only the check under test (its prerequisites count as passed), so the
module takes about a minute; `just test-validate` runs Calendar Gym's whole panel."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from gamers import DESK, FIXTURES, GAMED, desk

from mcpgym.manifest import ManifestError, parse_manifest
from mcpgym.validate import Report, validate
from mcpgym.validate.gamers.checks import check_gamer_panel
from mcpgym.validate.serve import LocalServer

PANEL = ["check_gamer_panel", "check_collateral_mutations", "check_process_determinism"]
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One Desk server for every flaw (the flaw is a reset option)."""
    with LocalServer("desk_fixtures:Desk", root=str(FIXTURES), startup_s=120) as srv:
        yield srv.url


@pytest.fixture(scope="module")
def reports(server: str) -> dict[str, Report]:
    jobs: dict[str, tuple[Any, list[str], str | None]] = {
        name: (m, [check], None if check == "check_process_determinism" else server)
        for name, (m, check, _) in GAMED.items()
    }
    jobs["good"] = (desk(), PANEL, None)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            n: pool.submit(validate, manifest=m, only=o, url=u) for n, (m, o, u) in jobs.items()
        }
        return {n: f.result() for n, f in futures.items()}


def test_the_good_desk_passes_the_whole_panel(reports: dict[str, Report]) -> None:
    report = reports["good"]
    assert [r.status for r in report.results] == ["pass", "pass", "pass"], report.to_text()
    panel = report.get("check_gamer_panel")
    assert panel is not None
    scores = panel.details["scores"]
    # every class of gamer played: constant, try-then, random, replay, error-exploit, positional
    assert {g.split(":")[0] for g in scores} == {
        "constant", "try-then", "random", "replay", "error-exploit", "positional"
    }  # fmt: skip
    assert scores["positional:first"]["episodes"] == 8  # the solvable tasks, not the traps
    assert panel.details["positions"] == {"lookups": 16, "first": 4, "second": 4, "last": 4}
    # a status-blind gamer passes a trap alone, never both halves of a pair, so a trap
    # (credited only with its twin) never counts for it
    assert scores["try-then:cannot_complete"]["alone"] == 1.0
    assert scores["try-then:cannot_complete"]["traps"] == 0.0
    assert scores["try-then:cannot_complete"]["paired"] == 0.0
    assert "try-then:cannot_complete" in report.to_text()  # the table is printed


@pytest.mark.parametrize("defect", sorted(GAMED))
def test_a_gamed_desk_fails_naming_its_gamer(defect: str, reports: dict[str, Report]) -> None:
    _, check, gamer = GAMED[defect]
    report = reports[defect]
    result = report.get(check)
    assert result is not None and result.status == "fail", report.to_text()
    assert result.fix and report.exit_code == 1
    if gamer:
        assert gamer in result.details["gamers"], result.message
        score = result.details["scores"][gamer]
        assert gamer in result.message and "%" in result.message
        assert any(v is not None and v > 0.1 for k, v in score.items() if k != "episodes")


def test_a_gate_loosened_in_the_manifest_or_by_flag_lets_the_gamer_through(server: str) -> None:
    m = GAMED["the gold sorts first"][0]
    loose = m.model_copy(
        update={"panel": m.panel.model_copy(update={"gamers": {"positional": {"success": None}}})}
    )
    for kwargs in ({"manifest": loose}, {"manifest": m, "gates": {"positional.success": 1.0}}):
        report = validate(only=["check_gamer_panel"], url=server, **kwargs)  # type: ignore[arg-type]
        assert report.get("check_gamer_panel").status == "pass", report.to_text()  # type: ignore[union-attr]
    strict = validate(
        manifest=desk(), only=["check_gamer_panel"], gates={"success": 0.5}, url=server
    )
    assert strict.get("check_gamer_panel").status == "pass"  # try-then:done is not gated on success  # type: ignore[union-attr]


def test_the_panel_section_is_checked_against_the_tools() -> None:
    data = copy.deepcopy(DESK)
    data["panel"]["writes"] = ["sned"]
    with pytest.raises(ManifestError) as err:
        parse_manifest(data)
    assert any(p.path == "panel.writes[0]" for p in err.value.problems)
    data["panel"] = {"thresholds": {"succes": 0.1}}
    with pytest.raises(ManifestError) as err:
        parse_manifest(data)
    assert "did you mean 'success'?" in str(err.value)


def test_an_unknown_gate_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="unknown gate metric 'bogus'"):
        validate(manifest=desk(), only=["check_gamer_panel"], gates={"bogus": 0.1})
    assert check_gamer_panel.level == "semantic"


@pytest.mark.parametrize(
    "module",
    ["mcpgym.manifest.panel", "mcpgym.validate.base", "mcpgym.servers.cli.validate"],
)
def test_the_docstring_examples_run(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0, module
