"""Graders: normalised snapshots and diffs, each assertion type, the allowed-write check, partial
credit behind the progress gate, call statistics, and grading at the end of an episode (finish,
step limit, state, replay)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from calendar_gym import CALENDAR_IDS, EVENT_IDS, CalendarEnv
from calendar_gym.agents import NaiveAgent
from calendar_gym.suite import regrade, specs
from calendar_gym.tasks import Task, load_suite
from calendar_gym.tasks.classify import Call
from calendar_gym.tasks.grading import TASK_RUBRIC, allowed, call_stats, check_assertions, grade
from calendar_gym.tasks.snapshot import ChangeLog, diff, snapshot
from calendar_gym.world.store import Store
from mcpgym import CallToolAction, CallToolObservation
from mcpgym.errors import InvalidRequest
from mcpgym.harness.eval.runner import run_evaluation

SUITE = load_suite("2")  # the grading machinery as suite v2 defines it (v3: test_validity_v3)
ALICE = "alice@acme.test"
HIRING, MARKETING = CALENDAR_IDS["hiring"], CALENDAR_IDS["marketing"]


@pytest.fixture
def play() -> Iterator[Any]:
    """`play(task_id, **reset)` → (env, call) where `call(tool, **args)` steps the env."""
    made: list[CalendarEnv] = []

    def start(task_id: str, **reset: Any) -> tuple[CalendarEnv, Any]:
        env = CalendarEnv()
        env.reset(task=task_id, **{"suite": "2", **reset})
        made.append(env)

        def call(tool: str, **arguments: Any) -> CallToolObservation:
            obs = env.step(CallToolAction(tool_name=tool, arguments=arguments))
            assert isinstance(obs, CallToolObservation)
            return obs

        return env, call

    yield start
    for env in made:
        env.close()


HAIRCUT = {"calendarId": "primary", "summary": "Haircut",
           "start": {"dateTime": "2026-03-05T17:00:00-05:00"},
           "end": {"dateTime": "2026-03-05T17:45:00-05:00"}}  # fmt: skip


# -- snapshots -------------------------------------------------------------------------------------


def test_snapshot_normalises_rows(play: Any) -> None:
    env, _ = play("t1-create-haircut")
    row = snapshot(env.store)["events"][(ALICE, EVENT_IDS["quarterly_planning"])]
    assert row["attendees"] == sorted(row["attendees"]) and "carol@acme.test" in row["attendees"]
    assert "end" in row and "end_" not in row
    assert not {"etag", "updated", "created", "sequence"} & set(row)


def test_change_log_keeps_the_snapshot_equal_to_a_full_read(play: Any) -> None:
    env, call = play("t3-hackathon-calendar")
    created = call("calendars_insert", summary="Hackathon 2026").result
    call("acl_insert", calendarId=created["id"], role="writer",
         scope={"type": "user", "value": "bob@acme.test"})  # fmt: skip
    call("acl_delete", calendarId=HIRING, ruleId="user:carol@acme.test")
    call("events_move", calendarId="primary", eventId=EVENT_IDS["lunch_erin"],
         destination=CALENDAR_IDS["globex_partnership"])  # fmt: skip
    assert call("events_delete", calendarId="primary", eventId="nope12345").error is not None
    episode = env.task_episode
    assert episode is not None and episode.current == snapshot(env.store)
    assert [c.wrote for c in episode.calls] == [True, True, True, True, False]


def test_change_log_reads_only_changed_rows_and_ignores_rollbacks() -> None:
    store = Store.create(now="2026-03-04T09:00:00-05:00")
    try:
        log = ChangeLog(store)
        current = snapshot(store)
        assert log.refresh(current) is current  # nothing changed: the same snapshot
        store.run("UPDATE calendars SET summary = 'Growth' WHERE id = ?", (MARKETING,))
        store.run("DELETE FROM acl WHERE calendar_id = ? AND rule_id = ?",
                  (HIRING, "user:carol@acme.test"))  # fmt: skip
        with pytest.raises(RuntimeError), store.transaction():
            store.run("DELETE FROM calendars WHERE id = ?", (HIRING,))
            raise RuntimeError("the call failed")
        updated = log.refresh(current)
        assert updated == snapshot(store) and updated is not current
        assert current["calendars"][(MARKETING,)]["summary"] == "Marketing"  # not modified
    finally:
        store.close()


def test_diff_lists_inserts_updates_and_deletes(play: Any) -> None:
    env, call = play("t1-create-haircut")
    before = snapshot(env.store)
    call("events_insert", **HAIRCUT)
    call("events_patch", calendarId="primary", eventId=EVENT_IDS["doctor"], location="Home")
    call("acl_delete", calendarId=HIRING, ruleId="user:carol@acme.test")
    ops = {(c.table, c.op, tuple(c.fields)) for c in diff(before, snapshot(env.store))}
    assert ("events", "insert", ()) in ops
    assert ("events", "update", ("location",)) in ops
    assert ("acl", "delete", ()) in ops


# -- assertions ------------------------------------------------------------------------------------


def _results(task_id: str, env: CalendarEnv, finish: str | None = None) -> dict[str, bool]:
    task = SUITE.get(task_id)
    seed = snapshot(_fresh(task))
    final = snapshot(env.store)
    return {r.name: r.holds for r in check_assertions(task, seed, final, finish)}


def _fresh(task: Task) -> Any:
    env = CalendarEnv()
    env.reset(task=task.id, suite=task.suite)
    return env.store


def test_count_and_exists_assertions_compare_instants_and_text(play: Any) -> None:
    env, call = play("t1-create-haircut")
    local = {**HAIRCUT, "summary": "haircut with Sam",
             "start": {"dateTime": "2026-03-05T17:00:00", "timeZone": "America/New_York"},
             "end": {"dateTime": "2026-03-05T22:45:00Z"}}  # fmt: skip
    assert call("events_insert", **local).error is None
    held = _results("t1-create-haircut", env, "done")
    assert held == {"a haircut at the right time": True, "exactly one haircut event": True,
                    "no writes outside the allowed set": True, "finish status": True}  # fmt: skip
    call("events_insert", **HAIRCUT)
    assert _results("t1-create-haircut", env, "done")["exactly one haircut event"] is False


def test_field_and_unchanged_assertions(play: Any) -> None:
    env, call = play("t1-rename-roadmap-entry")
    call("calendars_patch", calendarId=CALENDAR_IDS["q2_planning"], summary="Q2 Roadmap")
    held = _results("t1-rename-roadmap-entry", env, "done")
    assert held["the list entry is called Q2 Roadmap"] is False
    assert held["the calendar itself keeps its name"] is False
    assert held["no writes outside the allowed set"] is False


def test_allowed_writes_name_created_calendars_by_summary(play: Any) -> None:
    env, call = play("t3-hackathon-calendar")
    before = snapshot(env.store)
    cal = call("calendars_insert", summary="Hackathon 2026").result["id"]
    call(
        "acl_insert",
        calendarId=cal,
        role="writer",
        scope={"type": "user", "value": "bob@acme.test"},
    )
    call(
        "acl_insert",
        calendarId=HIRING,
        role="writer",
        scope={"type": "user", "value": "dana@acme.test"},
    )
    after = snapshot(env.store)
    task = SUITE.get("t3-hackathon-calendar")
    verdicts = {(c.table, c.key[0] == HIRING): allowed(task, c, after) for c in diff(before, after)}
    assert verdicts[("calendars", False)] and verdicts[("acl", False)]
    assert verdicts[("acl", True)] is False  # sharing another calendar is not part of the task


# -- scores ----------------------------------------------------------------------------------------


def test_partial_credit_needs_progress_and_success_needs_everything(play: Any) -> None:
    task = SUITE.get("t3-focus-conflict")
    env, call = play(task.id)
    seed = snapshot(env.store)
    nothing = grade(task, seed, seed, finish_status="done", calls=[])
    assert nothing.fraction > 0 and nothing.score == 0.0 and not nothing.progress
    call("events_insert", calendarId="primary", summary="Customer call: Umbrella",
         start={"dateTime": "2026-03-05T14:00:00-05:00"},
         end={"dateTime": "2026-03-05T15:00:00-05:00"})  # fmt: skip
    half = grade(task, seed, snapshot(env.store), finish_status="done", calls=[])
    assert half.progress and 0 < half.score == half.fraction < 1 and not half.success
    assert [a.name for a in half.assertions if not a.holds] == [
        "tomorrow's focus time is 16:00-18:00"
    ]


def test_call_stats_pair_errors_with_recoveries() -> None:
    calls = [Call("events_insert", {}, "INVALID_FORMAT"), Call("directory_search", {}),
             Call("events_insert", {}, wrote=True), Call("acl_insert", {}, "PERMISSION_DENIED"),
             Call("finish", {})]  # fmt: skip
    stats = call_stats(calls, success=False)
    assert stats.recoveries == [(0, 2)] and (stats.recovered, stats.unrecovered) == (1, 1)
    assert stats.error_codes == {"INVALID_FORMAT": 1, "PERMISSION_DENIED": 1}
    assert stats.writes == 1 and stats.steps_to_success is None
    assert call_stats(calls[:3], success=True).steps_to_success == 3
    trap = call_stats(calls[3:], success=True, expected={("acl_insert", "PERMISSION_DENIED")})
    assert (trap.errors, trap.expected_errors, trap.unrecovered) == (1, 1, 0)


# -- at the end of an episode ----------------------------------------------------------------------


def test_finish_ends_the_episode_with_reward_grade_and_failures(play: Any) -> None:
    env, call = play("t1-create-haircut")
    assert env.rubric is TASK_RUBRIC
    bad = call("events_insert", **{**HAIRCUT, "start": {"dateTime": "2026-03-05T17:00:00"}})
    assert bad.error is not None and bad.reward == 0.0 and "grade" not in bad.metadata
    assert env.state.grade is None  # operator-only: never in what an agent or player sees
    so_far = env.task_grade()
    assert so_far is not None and so_far.success is False
    call("events_insert", **HAIRCUT)
    obs = call("finish", status="done", summary="booked")
    assert obs.done and obs.reward == 1.0 and obs.metadata["success"] is True
    assert obs.metadata["failures"] == [
        {"call": 0, "tool": "events_insert", "label": "wrong_args", "step": "insert",
         "reason": "INVALID_FORMAT: start differ from step 'insert'"}]  # fmt: skip
    assert obs.metadata["grade"]["stats"]["recoveries"] == [[0, 1]]
    assert obs.metadata["rubric"] == {"episode_end": 1.0, "progress": 1.0, "partial_credit": 1.0,
                                      "task_score": 1.0}  # fmt: skip
    later = call("settings_get", setting="now")
    assert later.error is not None and later.error.model_dump()["error"]["code"] == (
        "FORBIDDEN_OPERATION"
    )


def test_error_codes_are_logged_whatever_the_error_mode(play: Any) -> None:
    env, call = play("t1-create-haircut", error_mode="plain")
    call("create_event", summary="Haircut")
    call("events_insert", **{**HAIRCUT, "start": {"dateTime": "2026-03-05T17:00:00"}})
    obs = call("finish", status="done", summary="gave up")
    assert [c.error for c in env.task_episode.calls] == ["UNKNOWN_TOOL", "INVALID_FORMAT", None]
    labels = [f["label"] for f in obs.metadata["failures"]]
    assert labels == ["wrong_tool", "wrong_args"]  # the finish repeats the insert's mistake


def test_the_step_limit_ends_and_grades_the_episode(play: Any) -> None:
    _, call = play("t1-create-haircut")
    limit = SUITE.get("t1-create-haircut").max_steps
    observations = [call("settings_get", setting="now") for _ in range(limit)]
    assert [o.done for o in observations] == [False] * (limit - 1) + [True]
    last = observations[-1]
    assert last.metadata["success"] is False and last.metadata["grade"]["finish_status"] is None
    refused = call("colors_get")
    assert "step limit" in refused.error.message


def test_reset_options_of_a_task_are_checked() -> None:
    env = CalendarEnv()
    with pytest.raises(InvalidRequest, match="task fixes them"):
        env.reset(task="t1-create-haircut", user="bob@acme.test")
    with pytest.raises(InvalidRequest, match="invalid task"):
        env.reset(task="t9-nope")
    obs = env.reset(task="t2-bob-moves-code-review", error_mode="plain")
    assert obs.metadata["user"] == "bob@acme.test" and "task" not in obs.metadata
    assert env.state.task == "t2-bob-moves-code-review"
    env.reset()  # a plain episode again: no task, no rubric
    assert env.rubric is None and env.task_grade() is None
    env.close()


def test_regrading_a_record_by_replay_matches_its_final_metadata() -> None:
    chosen = specs(
        "2", tasks=["t2-add-rivera-lunch", "t3-slot-three-people"], phrasings=["natural"]
    )
    result = run_evaluation(CalendarEnv, NaiveAgent(), chosen)
    for record in result.records:
        again = regrade(record)
        assert again["grade"] == record.final_metadata["grade"]
        assert again["failures"] == record.final_metadata["failures"]


def test_regrade_grades_an_episode_that_never_finished() -> None:
    class Stops:
        name = "stops"

        def start(self, spec: Any, tools: Any) -> Any:
            return self

        async def act(self, result: Any) -> Any:
            if getattr(result.observation, "tool_name", None):
                return None
            return {"type": "call_tool", "tool_name": "events_insert", "arguments": HAIRCUT}

        async def aclose(self) -> None:
            return None

    chosen = specs("2", tasks=["t1-create-haircut"], phrasings=["explicit"], error_modes=["plain"])
    (record,) = run_evaluation(CalendarEnv, Stops(), chosen).records
    assert record.done_reason == "agent_stopped" and "grade" not in record.final_metadata
    meta = regrade(record)
    assert meta["success"] is False and meta["grade"]["progress"] is True
    assert 0 < meta["grade"]["score"] < 1  # all but the finish status
