"""The gamer sweep (issue 27's acceptance thresholds): every reference agent and gamer on every
task of suite v3 in both phrasings, three seeds — and suite v2, which the same gamers beat.

Marker `calendar_validity` (`just test-calendar-validity`, about four minutes): a suite-wide
sweep is too slow for the default run. Thresholds, per gamer class:

- oracle 100 % in both phrasings; the crawling oracle 100 % on natural (no gold read);
- first-match loses at least 40 points from explicit to natural;
- positional pickers and the fixed-offset clock (on first match): ≤ 10 % natural, ≤ 5 % of
  natural trap episodes, paired trap score ≤ 2 % on natural (on the explicit phrasing there is
  nothing to pick: they are first-match there);
- status-blind finishers: ≤ 5 % on traps (a trap credited only with its twin), paired trap
  score ≤ 2 %; every status-blind gamer ≤ 10 % overall but `blind-done` (≤ 10 % natural), which
  on a task that asks for a change *is* the literal request played honestly.
  `blind-cannot-complete` passes a trap *on its own* only where trying the request on the right
  target was refused — the finding itself, which is why one episode cannot fail it and the
  trap is credited only with its twin (asserted below);
- the gamers that read before they guess (`look-then-guess`: first match, but reads the
  target's role and the event before writing; `ask-if-two`: asks whenever a look-up lists two
  matches): as the pickers, on the natural phrasing (on the explicit one only the ambiguous
  name is looked up and every role is the given calendar's, so reading there *is* solving);
- replay and error-exploit: ≤ 10 % overall, ≤ 5 % on traps, paired ≤ 2 %;
- every gamer at ≤ 10 % success averages ≤ 0.15 reward (defect 7).
"""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym.bench.validity import AGENTS, gamer_table, play_suite, table_row
from calendar_gym.tasks import load_suite

pytestmark = [pytest.mark.calendar_validity, pytest.mark.timeout(1200)]  # one sweep, minutes

SEEDS = (0, 1, 2)
PICKERS = ("pick-first", "pick-second", "pick-last", "fixed-offset", "look-then-guess",
           "ask-if-two")  # fmt: skip
"""Measured on five seeds: a pick is a draw, and three seeds leave a 10 % bound to noise."""


@pytest.fixture(scope="module")
def runs() -> dict[str, Any]:
    """Every agent but the pickers, played once (three seeds) for every test of the module."""
    out = {}
    for name in AGENTS:
        if name in PICKERS or name == "crawler-fixed-offset":
            continue
        phrasings = ("natural",) if name == "crawler" else ("explicit", "natural")
        out[name] = play_suite(AGENTS[name], "3", phrasings=phrasings, seeds=SEEDS)
    return out


@pytest.fixture(scope="module")
def v3(runs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: table_row(results, "3") for name, results in runs.items()}


@pytest.fixture(scope="module")
def pickers() -> dict[str, dict[str, Any]]:
    """The pickers on the natural phrasing only (what they are held to), five seeds."""
    seeds = (0, 1, 2, 3, 4)
    return {
        name: table_row(play_suite(AGENTS[name], "3", phrasings=("natural",), seeds=seeds), "3")
        for name in PICKERS
    }


def test_the_ceiling_and_the_proof(v3: dict[str, dict[str, Any]]) -> None:
    assert v3["oracle"]["explicit"] == v3["oracle"]["natural"] == 1.0
    assert v3["crawler"]["natural"] == 1.0
    gap = v3["first-match"]["explicit"] - v3["first-match"]["natural"]
    assert gap >= 0.40


@pytest.mark.parametrize("name", PICKERS)
def test_positional_pickers_and_the_fixed_clock_stay_at_the_floor(
    pickers: dict[str, dict[str, Any]], name: str
) -> None:
    row = pickers[name]
    assert row["natural"] <= 0.10 and row["traps_natural"] <= 0.05, row
    assert row["paired_natural"] <= 0.02, row


@pytest.mark.parametrize(
    "name", ["blind-done", "blind-cannot-complete", "blind-needs-clarification"]
)
def test_status_blind_finishers_pass_no_pair(v3: dict[str, dict[str, Any]], name: str) -> None:
    row = v3[name]
    assert row["traps"] <= 0.05 and row["paired"] <= 0.02, row
    assert row["natural" if name == "blind-done" else "overall"] <= 0.10, row


def test_a_blind_refusal_passes_a_trap_alone_only_where_the_request_was_refused_on_its_target(
    runs: dict[str, Any], v3: dict[str, dict[str, Any]]
) -> None:
    suite = load_suite("3")
    results = runs["blind-cannot-complete"]
    passed = {k[0] for k, (ok, _) in results.items() if ok and suite.get(k[0]).is_trap}
    assert passed and all(suite.get(t).kind in ("trap_permission", "trap_missing") for t in passed)
    assert v3["blind-cannot-complete"]["traps_alone"] > 0.2  # what one episode cannot fail
    assert v3["blind-cannot-complete"]["traps"] == 0.0  # and the twin does


@pytest.mark.parametrize("name", ["replay", "error-exploit", "null-done", "null-cannot-complete",
                                  "null-needs-clarification"])  # fmt: skip
def test_replays_and_error_exploits_score_nothing(v3: dict[str, dict[str, Any]], name: str) -> None:
    row = v3[name]
    assert row["overall"] <= 0.10 and row["traps"] <= 0.05 and row["paired"] <= 0.02, row


def test_low_success_buys_little_reward(v3: dict[str, dict[str, Any]]) -> None:
    for name, row in v3.items():
        if row["overall"] is not None and row["overall"] <= 0.10:
            assert row["reward"] <= 0.15, (name, row)


def test_suite_v2_is_beaten_by_the_gamers_v3_stops() -> None:
    """v2 fails the same panel: the positional pickers and the partial-credit farmers."""
    v2 = gamer_table("2", agents=["pick-second", "pick-last", "blind-cannot-complete"])
    assert v2["pick-second"]["natural"] > 0.5 and v2["pick-last"]["natural"] > 0.5
    assert v2["blind-cannot-complete"]["reward"] > 0.3
