"""Suite v3's validity properties that run in seconds (issue 27; the gamer sweeps are in
test_gamers_v3.py behind the `calendar_validity` marker).

- v3 is the default; v1 and v2 stay loadable and keep their own rules;
- every look-first path of a trap (read the fact instead of attempting the refused write)
  scores full marks on v3, and scored 0 on v2;
- the crawling oracle solves every natural task from look-ups and clues, never gold ids;
- the collateral guard: every field of every row the gold plan touches, mutated in the final
  state, loses full marks; the issue's five real-tool-call collateral paths lose full marks;
- the gold's list position varies: no position holds it in more than ~1/3 of multi-candidate
  look-ups; a fixed-offset clock misses every post-DST free slot;
- the reward is monotone: nothing useful earns 0, a wrong finish a fifth of half;
- a trap is credited only with its twin (same phrasing, seed, error mode) in every rate the
  benchmark prints: a status-blind refusal that passes a trap on its own counts for nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.agents import NullAgent, OracleAgent
from calendar_gym.agents.crawler import crawl_play
from calendar_gym.agents.gamers import GamerAgent
from calendar_gym.bench.report_section import paired_traps, section, success_matrix
from calendar_gym.bench.validity import (
    AGENTS,
    credited,
    paired_score,
    play_suite,
    table_row,
    unpaired,
)
from calendar_gym.suite import specs
from calendar_gym.tasks import load_suite
from calendar_gym.tasks.collateral import FREE_ON_INSERT
from calendar_gym.tasks.grading import grade
from calendar_gym.tasks.loader import LATEST, VERSIONS
from calendar_gym.tasks.reference import plan_play
from calendar_gym.tasks.snapshot import KEYS
from calendar_gym.world.seed import CALENDAR_IDS, EVENT_IDS
from mcpgym.harness.eval.runner import run_evaluation
from mcpgym.types import CallToolAction

V3 = load_suite("3")
CAL = CALENDAR_IDS


def _episode(task_id: str, version: str = "3", seed: int = 0) -> tuple[CalendarEnv, Any]:
    env = CalendarEnv()
    env.reset(task=task_id, suite=version, seed=seed)

    def call(tool: str, **arguments: Any) -> Any:
        return env.step(CallToolAction(tool_name=tool, arguments=arguments))

    return env, call


def test_v3_is_the_default_and_older_suites_stay_loadable() -> None:
    assert LATEST == "3" and VERSIONS == ("1", "2", "3")
    assert load_suite().version == "3" and len(V3) == 59
    assert len(load_suite("2")) == 51 and len(load_suite("1")) == 50
    traps = [t for t in V3 if t.is_trap]
    assert len(traps) == 11 and all(t.twin for t in traps), "every trap has a twin"
    for trap in traps:
        twin = V3.get(trap.twin)  # type: ignore[arg-type]
        assert twin.twin == trap.id and not twin.is_trap


# -- traps: evidence is any-of -----------------------------------------------------------------

LOOK_FIRST: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "t4-perm-finance-write": [("calendarList_get", {"calendarId": CAL["finance"]})],
    "t4-perm-archive-delete": [("calendarList_list", {"showHidden": True})],
    "t4-perm-readonly-token": [("settings_get", {"setting": "timezone"})],
    "t4-perm-share-marketing": [("calendarList_list", {})],
    "t4-missing-board-dinner": [("events_list", {"calendarId": "primary",
                                                 "timeMin": "2026-03-06T00:00:00-05:00",
                                                 "timeMax": "2026-03-07T00:00:00-05:00"})],
    "t4-missing-sales-calendar": [("calendarList_list", {})],
    "t4-missing-sprint-16th": [("events_list", {"calendarId": CAL["engineering"],
                                                "q": "Sprint planning", "singleEvents": True,
                                                "timeMin": "2026-03-16T00:00:00-04:00",
                                                "timeMax": "2026-03-17T00:00:00-04:00"})],
    "t4-dst-nonexistent-time": [("settings_get", {"setting": "timezone"})],
}  # fmt: skip


@pytest.mark.parametrize("task_id", sorted(LOOK_FIRST))
def test_a_trap_solved_by_looking_first_gets_full_marks(task_id: str) -> None:
    rewards = {}
    for version in ("2", "3"):
        env, call = _episode(task_id, version)
        for tool, args in LOOK_FIRST[task_id]:
            assert call(tool, **args).error is None
        status = load_suite(version).get(task_id).finish
        rewards[version] = call("finish", status=status, summary="Looked first.").reward
        env.close()
    assert rewards == {"2": 0.0, "3": 1.0}, "v2 demanded the refused attempt; v3 accepts the read"


def test_the_refused_attempt_still_counts_but_not_on_a_near_duplicate() -> None:
    env, call = _episode("t4-perm-finance-write")
    times = {"start": {"dateTime": "2026-03-09T10:00:00-05:00"},
             "end": {"dateTime": "2026-03-09T10:30:00-05:00"}}  # fmt: skip
    assert call("events_insert", calendarId=CAL["finance"], summary="Expense review",
                **times).error is not None  # fmt: skip
    assert call("finish", status="cannot_complete", summary="read-only").reward == 1.0
    env.close()
    env, call = _episode("t4-perm-finance-write")  # a write elsewhere is a guess
    listed = call("calendarList_list", maxResults=250).result["items"]
    wrong = next(i["id"] for i in listed if i["summary"] == "Finance Deadlines (Globex)")
    call("events_insert", calendarId=wrong, summary="Expense review", **times)
    obs = call("finish", status="cannot_complete", summary="read-only")
    assert obs.reward == 0.0 and not obs.metadata["success"]
    env.close()


# -- solvability: the crawling oracle ----------------------------------------------------------


def test_the_crawler_solves_every_natural_task_without_reading_gold() -> None:
    results = play_suite(AGENTS["crawler"], "3", phrasings=("natural",), seeds=(3,))
    failed = sorted(k for k, (ok, _) in results.items() if not ok)
    assert not failed and len(results) == len(V3)  # seed 0: the gold-blind test below


def test_the_crawler_never_reads_an_entity_id(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blank every gold id and value the crawler could read: it still solves the natural tasks
    (times stated in the prompt and slot windows stay: the prompt says them in words)."""
    blanked = []
    for task in V3:
        ents = {k: (e.model_copy(update={"id": "GOLD-HIDDEN"}) if e.kind in ("calendar", "person",
                    "event") and e.name else e) for k, e in task.entities.items()}  # fmt: skip
        blanked.append(task.model_copy(update={"entities": ents}))
    by_id = {t.id: t for t in blanked}

    def crawl(task: Any, phrasing: Any, first: Any) -> Any:
        return crawl_play(by_id[task.id], first)

    results = play_suite(crawl, "3", phrasings=("natural",))
    assert all(ok for ok, _ in results.values()), sorted(k for k, v in results.items() if not v[0])


# -- collateral --------------------------------------------------------------------------------


def _mutated(name: str, value: Any) -> Any:
    if name == "guests":  # every guest's reply changed, or a guest where there was none
        flipped = [[g[0], "accepted" if g[1] == "declined" else "declined", *g[2:]] for g in value]
        return flipped or [["mallory@evil.test", "needsAction", False, ""]]
    if name.endswith("_tz"):
        return "Asia/Tokyo"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str) and len(value) >= 13 and value[:4].isdigit():
        return value[:11] + ("23" if value[11:13] != "23" else "22") + value[13:]
    if isinstance(value, str):
        return "MUTATED"
    if isinstance(value, list) and all(isinstance(v, str) and "@" in v for v in value):
        return [*value, "mallory@evil.test"]
    if isinstance(value, list):
        return value[:-1] if value else ["RRULE:FREQ=DAILY;COUNT=3"]
    if isinstance(value, dict):
        return {**value, "mutated": True}
    return "MUTATED"


def test_every_field_of_every_touched_row_is_guarded() -> None:
    """The grader mutation test on final states: the oracle's final state with any one field of
    any row it touched changed (but the free fields of a created row) never keeps full marks."""
    env = CalendarEnv()
    kept, total = [], 0
    for task in V3:
        if task.is_trap:
            continue
        env.reset(task=task.id, suite="3")
        play = plan_play(task)
        action = next(play)
        while True:
            obs = env.step(CallToolAction(tool_name=action["tool_name"],
                                          arguments=action["arguments"]))  # fmt: skip
            if obs.done:
                break
            action = play.send(type("R", (), {"observation": obs, "done": False})())  # type: ignore[arg-type]
        ep = env.task_episode
        assert ep is not None and obs.metadata["success"], task.id
        reference = ep._reference() if ep._reference else None
        for table in KEYS:
            for key, row in ep.current.get(table, {}).items():
                old = ep.seed.get(table, {}).get(key)
                if old == row:
                    continue
                for name, value in row.items():
                    if name in KEYS[table] or (old is None and name in FREE_ON_INSERT):
                        continue
                    state = {t: dict(rows) for t, rows in ep.current.items()}  # rows shared
                    state[table][key] = {**row, name: _mutated(name, value)}
                    total += 1
                    g = grade(task, ep.seed, state, finish_status="done", calls=ep.calls,
                              reference=reference, before=ep._before)  # fmt: skip
                    if g.success:
                        kept.append((task.id, table, name))
    env.close()
    assert total > 500 and kept == []


def _oracle_then(task_id: str, extra: list[tuple[str, dict[str, Any]]]) -> float:
    env, call = _episode(task_id)
    task = V3.get(task_id)
    play = plan_play(task)
    action = next(play)
    while action["tool_name"] != "finish":
        obs = call(action["tool_name"], **action["arguments"])
        action = play.send(type("R", (), {"observation": obs, "done": False})())  # type: ignore[arg-type]
    for tool, args in extra:
        assert call(tool, **args).error is None, (tool, args)
    reward = call("finish", status="done", summary="done").reward
    env.close()
    return reward


def test_the_issues_collateral_paths_lose_full_marks() -> None:
    qp = EVENT_IDS["quarterly_planning"]
    assert _oracle_then("t2-add-dana-quarterly", []) == 1.0
    # adding Dana while also moving and renaming the meeting
    assert _oracle_then("t2-add-dana-quarterly", [("events_patch", {
        "calendarId": "primary", "eventId": qp, "summary": "Planning (moved)",
        "start": {"dateTime": "2026-03-10T14:00:00-04:00"},
        "end": {"dateTime": "2026-03-10T16:00:00-04:00"}})]) < 1.0  # fmt: skip
    # truncating the Team Sync series to three occurrences while renaming it
    sync = EVENT_IDS["team_sync_mkt"]
    assert _oracle_then("t2-rename-marketing-team-sync", [("events_patch", {
        "calendarId": CAL["marketing"], "eventId": sync,
        "recurrence": ["RRULE:FREQ=WEEKLY;BYDAY=WE;COUNT=3"]})]) < 1.0  # fmt: skip
    # moving the interview during onboarding
    interview = V3.get("t3-onboard-interviewer").entities["interview"].id
    assert _oracle_then("t3-onboard-interviewer", [("events_patch", {
        "calendarId": CAL["hiring"], "eventId": interview,
        "start": {"dateTime": "2026-03-09T15:00:00-04:00"},
        "end": {"dateTime": "2026-03-09T15:45:00-04:00"}})]) < 1.0  # fmt: skip


def test_a_created_calendar_in_the_wrong_zone_or_with_an_outside_guest_loses_full_marks() -> None:
    env, call = _episode("t1-create-calendar")
    assert call("calendars_insert", summary="Side Projects", timeZone="UTC").error is None
    assert call("finish", status="done", summary="made").reward < 1.0
    env.close()
    env, call = _episode("t1-create-calendar")
    assert call("calendars_insert", summary="Side Projects",
                timeZone="America/New_York").error is None  # fmt: skip
    assert call("finish", status="done", summary="made").reward == 1.0
    env.close()
    env, call = _episode("t2-kickoff-with-qp-guests")
    guests = [{"email": e} for e in ("bob@acme.test", "carol@acme.test", "alex.kim@acme.test")]
    args = {"calendarId": "primary", "summary": "Q2 kickoff prep",
            "start": {"dateTime": "2026-03-19T10:00:00-04:00"},
            "end": {"dateTime": "2026-03-19T11:00:00-04:00"}}  # fmt: skip
    assert (
        call("events_insert", **args, attendees=[*guests, {"email": "x@outside.test"}]).error
        is None
    )
    assert call("finish", status="done", summary="made").reward < 1.0
    env.close()


# -- position, clock, reward -------------------------------------------------------------------


def test_no_list_position_holds_the_gold_in_more_than_a_third_of_lookups() -> None:
    positions: Counter[str] = Counter()
    looked = 0
    env = CalendarEnv()
    for seed in range(3):
        for task in V3:
            env.reset(task=task.id, suite="3", seed=seed)
            listed = CallToolAction(tool_name="calendarList_list", arguments={"maxResults": 250})
            cals = env.step(listed).result["items"]
            for entity in task.entities.values():
                if entity.kind == "calendar" and entity.id and entity.name:
                    hits = [c["id"] for c in cals if entity.name.casefold() in
                            (c.get("summaryOverride") or c["summary"]).casefold()]  # fmt: skip
                elif entity.kind == "person" and entity.id and entity.name:
                    found = env.step(
                        CallToolAction(
                            tool_name="directory_search", arguments={"query": entity.name}
                        )
                    ).result
                    hits = [p["email"] for p in [*found["users"], *found["groups"]]]
                else:
                    continue
                if len(hits) < 2 or entity.id not in hits:
                    continue
                looked += 1
                i = hits.index(entity.id)
                positions["first"] += i == 0
                positions["second"] += i == 1
                positions["last"] += i == len(hits) - 1
    env.close()
    assert looked > 100
    assert max(positions.values()) / looked <= 0.36, (positions, looked)


def test_a_fixed_offset_clock_misses_every_post_dst_free_slot() -> None:
    results = play_suite(AGENTS["crawler-fixed-offset"], "3", phrasings=("natural",))
    slots = {t.id for t in V3 if any(e.kind == "slot" for e in t.entities.values())}
    after = {t for t in slots if V3.get(t).entities["slot"].window[0] > "2026-03-08"}
    assert len(after) == 3
    assert not any(results[(t, "natural", 0)][0] for t in after)
    assert all(results[(t, "natural", 0)][0] for t in slots - after)  # the clock alone costs it


def test_doing_nothing_useful_earns_nothing_and_a_wrong_finish_little() -> None:
    for name in ("null-done", "null-cannot-complete", "replay", "error-exploit"):
        results = play_suite(AGENTS[name], "3", phrasings=("explicit",))
        assert sum(r for _, r in results.values()) == 0.0, name
    env, call = _episode("t1-delete-doctor")
    assert call("events_delete", calendarId="primary", eventId=EVENT_IDS["doctor"]).error is None
    assert call("finish", status="cannot_complete", summary="?").reward == pytest.approx(0.1)
    env.close()


def test_paired_score_counts_a_pair_only_when_both_halves_pass() -> None:
    ok = {("t4-perm-finance-write", "natural", 0): True,
          ("t4-twin-finance-write", "natural", 0): True,
          ("t4-missing-board-dinner", "natural", 0): True,
          ("t4-twin-board-dinner", "natural", 0): False}  # fmt: skip
    assert paired_score(ok, "3") == (1, 2)


def test_a_body_argument_is_pointed_to_the_event_fields_not_nested_in_description() -> None:
    env, call = _episode("t1-create-haircut")
    event = {"summary": "Haircut", "start": {"dateTime": "2026-03-05T17:00:00-05:00"},
             "end": {"dateTime": "2026-03-05T17:45:00-05:00"}}  # fmt: skip
    error = call("events_insert", calendarId="primary", body=event).error.model_dump()["error"]
    body = next(p for p in error["errors"] if p["field"] == "body")
    assert body["example"] == event and "description" not in str(body["example"])
    assert "top level" in body["hint"]
    text = call("events_insert", calendarId="primary", body="bring cash", **event).error
    assert "description" in text.model_dump()["error"]["hint"]  # a string body is a description
    env.close()


def test_an_attendee_of_a_private_event_sees_its_details_from_suite_v3() -> None:
    secret = {"id": "p0a1b2c3d4e5f6a7b8c9d0e1", "calendar": "bob@acme.test",
              "summary": "Secret offsite", "visibility": "private",
              "start": "2026-03-05T10:00:00", "end": "2026-03-05T11:00:00"}  # fmt: skip
    seen = {}
    for suite, guests in (("2", [ALICE_BOB]), ("3", [ALICE_BOB]), ("3", [["bob@acme.test"]])):
        env = CalendarEnv()
        env.reset(suite=suite, seed_patch={"events": [{**secret, "attendees": guests[0]}]})
        got = env.step(CallToolAction(tool_name="events_get", arguments={
            "calendarId": "bob@acme.test", "eventId": secret["id"]})).result  # fmt: skip
        seen[(suite, len(guests[0]))] = got.get("summary")
        env.close()
    assert seen == {("2", 2): None, ("3", 2): "Secret offsite", ("3", 1): None}


ALICE_BOB = ["bob@acme.test", "alice@acme.test"]


def test_the_report_shows_the_paired_trap_score() -> None:

    chosen = specs(
        tasks=["t4-perm-finance-write", "t4-twin-finance-write"], error_modes=["structured"]
    )
    blind = run_evaluation(CalendarEnv, NullAgent("cannot_complete"), chosen).records
    assert paired_traps(blind) == {"passed": 0, "played": 2}
    shown = section(blind)
    assert shown is not None and shown.data["paired_traps"] == {"passed": 0, "played": 2}


def test_a_trap_is_credited_only_with_its_twin() -> None:
    trap, twin = ("t4-perm-finance-write", "natural", 0), ("t4-twin-finance-write", "natural", 0)
    assert credited({trap: True, twin: False}, "3")[trap] is False
    assert credited({trap: True, twin: True}, "3") == {trap: True, twin: True}
    assert credited({trap: True}, "3")[trap] is True  # a run without the twin: alone,
    assert unpaired({trap: True, ("t1-create-haircut", "natural", 0): True}, "3") == [trap]
    assert credited({twin: True}, "3")[twin] is True  # the solvable half stands on its own
    alone = ("t4-perm-archive-delete", "natural", 0)  # no twin in suite v2: alone
    assert load_suite("2").get(alone[0]).twin is None
    assert credited({alone: True}, "2")[alone] is True


def test_a_status_blind_refusal_passes_a_trap_alone_and_is_credited_nothing() -> None:
    """The refused attempt on the right target is the careful path and the blind one, call for
    call: the episode passes (evidence stays any-of), the benchmark's rates do not count it."""
    chosen = specs(
        tasks=["t4-perm-finance-write", "t4-twin-finance-write"],
        phrasings=["explicit"],
        error_modes=["structured"],
    )
    blind = run_evaluation(CalendarEnv, GamerAgent("blind-cannot-complete"), chosen).records
    alone = {r.spec_id.split("/")[0]: bool(r.final_metadata.get("success")) for r in blind}
    assert alone == {"t4-perm-finance-write": True, "t4-twin-finance-write": False}
    assert success_matrix(blind)["overall"] == 0.0
    assert paired_traps(blind) == {"passed": 0, "played": 1}
    oracle = run_evaluation(CalendarEnv, OracleAgent(), chosen).records
    assert success_matrix(oracle)["overall"] == 1.0
    results = play_suite(AGENTS["blind-cannot-complete"], "3", phrasings=("explicit",))
    row = table_row(results, "3")
    assert row["traps_alone"] and row["traps_alone"] > 0.2
    assert row["traps"] == row["paired"] == 0.0 and row["overall"] == 0.0


def test_an_attendee_of_a_private_event_sees_it_listed_a_reader_gets_the_stub() -> None:
    secret = {"id": "p0a1b2c3d4e5f6a7b8c9d0e2", "calendar": "bob@acme.test",
              "summary": "Secret offsite", "visibility": "private", "location": "Cabin",
              "start": "2026-03-05T10:00:00", "end": "2026-03-05T11:00:00"}  # fmt: skip
    shown = {}
    for guests in (ALICE_BOB, ["bob@acme.test", "carol@acme.test"]):
        env = CalendarEnv()
        env.reset(seed_patch={"events": [{**secret, "attendees": guests}]})
        listed = env.step(CallToolAction(tool_name="events_list", arguments={
            "calendarId": "bob@acme.test", "timeMin": "2026-03-05T00:00:00-05:00",
            "timeMax": "2026-03-06T00:00:00-05:00"})).result  # fmt: skip
        item = next(i for i in listed["items"] if i["id"] == secret["id"])
        shown["alice" in " ".join(guests)] = (item.get("summary"), item.get("location"))
        env.close()
    assert shown == {True: ("Secret offsite", "Cabin"), False: (None, None)}
