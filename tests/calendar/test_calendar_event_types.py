"""`eventType` on writes, as v3 allows it, and the suite-v2 rule that a recurring event names
its time zone: what can be created, what each type needs, that a type never changes, and a
structured error naming the field and the fix for everything Google rejects."""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym import CALENDAR_IDS
from helpers.cal import Caller

TIMED = {
    "start": {"dateTime": "2026-03-05T13:00:00-05:00"},
    "end": {"dateTime": "2026-03-05T15:00:00-05:00"},
}
ONE_DAY = {"start": {"date": "2026-03-06"}, "end": {"date": "2026-03-07"}}
VALID: dict[str, dict[str, Any]] = {
    "focusTime": {**TIMED, "focusTimeProperties": {"autoDeclineMode": "declineNone",
                                                    "chatStatus": "doNotDisturb"}},
    "outOfOffice": {**TIMED, "outOfOfficeProperties": {
        "autoDeclineMode": "declineAllConflictingInvitations", "declineMessage": "Away"}},
    "workingLocation": {**ONE_DAY, "visibility": "public", "transparency": "transparent",
                        "workingLocationProperties": {"type": "homeOffice", "homeOffice": {}}},
    "birthday": {**ONE_DAY, "visibility": "private", "transparency": "transparent",
                 "recurrence": ["RRULE:FREQ=YEARLY"]},
    "default": TIMED,
}  # fmt: skip
BLOCK = {
    "focusTime": "focusTimeProperties",
    "outOfOffice": "outOfOfficeProperties",
    "workingLocation": "workingLocationProperties",
    "birthday": "birthdayProperties",
}


@pytest.mark.parametrize("kind", sorted(VALID))
def test_every_creatable_type_round_trips_and_filters(call: Caller, kind: str) -> None:
    made = call.ok("events_insert", calendarId="primary", summary=kind, eventType=kind,
                   **VALID[kind])  # fmt: skip
    assert made["eventType"] == kind
    if kind in BLOCK:
        want = VALID[kind].get(BLOCK[kind], {"type": "birthday"})
        assert made[BLOCK[kind]] == want
    got = call.ok("events_get", calendarId="primary", eventId=made["id"])
    assert got == made
    listed = call.ok("events_list", calendarId="primary", eventTypes=[kind])["items"]
    assert made["id"] in {e["id"] for e in listed}
    others = [t for t in VALID if t != kind]
    assert made["id"] not in {
        e["id"] for e in call.ok("events_list", calendarId="primary", eventTypes=others)["items"]
    }
    assert made["id"] in {e["id"] for e in call.ok("events_list", calendarId="primary")["items"]}


def test_events_without_a_type_are_default(call: Caller) -> None:
    made = call.ok("events_insert", calendarId="primary", summary="Plain", **TIMED)
    assert made["eventType"] == "default"
    seeded = call.ok("events_list", calendarId="primary", maxResults=3)["items"]
    assert {e["eventType"] for e in seeded} == {"default"}


# every rejection: (event type, arguments, the field named, the code)
REJECTED: list[tuple[str, dict[str, Any], str, str]] = [
    ("fromGmail", TIMED, "eventType", "INVALID_VALUE"),
    ("focusTime", TIMED, "focusTimeProperties", "MISSING_REQUIRED_FIELD"),
    ("focusTime", {**VALID["focusTime"], **ONE_DAY}, "start.date", "INVALID_VALUE"),
    ("focusTime", {**VALID["focusTime"], "transparency": "transparent"}, "transparency",
     "INVALID_VALUE"),
    ("outOfOffice", TIMED, "outOfOfficeProperties", "MISSING_REQUIRED_FIELD"),
    ("outOfOffice", {**VALID["outOfOffice"], **ONE_DAY}, "start.date", "INVALID_VALUE"),
    ("workingLocation", {**VALID["workingLocation"], "visibility": "default"}, "visibility",
     "INVALID_VALUE"),
    ("workingLocation", {**VALID["workingLocation"], "transparency": "opaque"}, "transparency",
     "INVALID_VALUE"),
    ("workingLocation", {**VALID["workingLocation"], "end": {"date": "2026-03-09"}}, "end.date",
     "INVALID_VALUE"),
    ("workingLocation", {k: v for k, v in VALID["workingLocation"].items()
                         if k != "workingLocationProperties"}, "workingLocationProperties",
     "MISSING_REQUIRED_FIELD"),
    ("workingLocation", {**VALID["workingLocation"], "workingLocationProperties": {}},
     "workingLocationProperties.type", "MISSING_REQUIRED_FIELD"),
    ("birthday", {**VALID["birthday"], "recurrence": ["RRULE:FREQ=WEEKLY"]}, "recurrence",
     "INVALID_VALUE"),
    ("birthday", {**VALID["birthday"], **TIMED, "start": {"dateTime": "2026-03-05T13:00:00Z",
                  "timeZone": "UTC"}, "end": {"dateTime": "2026-03-05T14:00:00Z",
                  "timeZone": "UTC"}}, "end.date", "INVALID_VALUE"),
    ("birthday", {**VALID["birthday"], "visibility": "public"}, "visibility", "INVALID_VALUE"),
    ("birthday", {**VALID["birthday"], "birthdayProperties": {"type": "anniversary"}},
     "birthdayProperties.type", "INVALID_VALUE"),
    ("default", {**TIMED, "outOfOfficeProperties": {"declineMessage": "x"}},
     "outOfOfficeProperties", "INVALID_VALUE"),
    ("focusTime", {**VALID["focusTime"], "workingLocationProperties": {"type": "homeOffice"}},
     "workingLocationProperties", "INVALID_VALUE"),
    ("focusTime", {**VALID["focusTime"], "focusTimeProperties": {"chatStatus": "busy"}},
     "focusTimeProperties.chatStatus", "INVALID_ENUM"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "args", "field", "code"), REJECTED)
def test_what_google_rejects_is_refused_naming_the_field_and_fix(
    session: Any, kind: str, args: dict[str, Any], field: str, code: str
) -> None:
    env, call = session()
    error = call.fail("events_insert", calendarId="primary", summary="x", eventType=kind, **args)
    problems = error["errors"] or [error]
    found = [p for p in problems if p["field"] == field]
    assert found, [(p["code"], p["field"]) for p in problems]
    assert found[0]["code"] == code and found[0]["hint"]
    assert "finish" not in found[0]["hint"] and "cannot_complete" not in found[0]["hint"]
    if code != "INVALID_ENUM":
        assert error["http_status"] == 400 and error["category"] == "validation"
    assert env.state.writes == 0  # nothing was written


def test_the_example_fixes_a_missing_block(call: Caller) -> None:
    error = call.fail("events_insert", calendarId="primary", eventType="workingLocation",
                      **{k: v for k, v in VALID["workingLocation"].items()
                         if k != "workingLocationProperties"})  # fmt: skip
    fixed = call.ok("events_insert", calendarId="primary", eventType="workingLocation",
                    **{**VALID["workingLocation"], **error["example"]})  # fmt: skip
    assert fixed["workingLocationProperties"]["type"] == "homeOffice"


@pytest.mark.parametrize("kind", ["focusTime", "outOfOffice", "workingLocation"])
def test_status_events_only_on_primary_calendars(call: Caller, kind: str) -> None:
    marketing = CALENDAR_IDS["marketing"]  # Alice is a writer there
    error = call.fail("events_insert", calendarId=marketing, eventType=kind, **VALID[kind])
    assert (error["code"], error["field"]) == ("INVALID_VALUE", "calendarId")
    assert error["example"] == {"calendarId": "primary"}
    made = call.ok("events_insert", calendarId="primary", eventType=kind, **VALID[kind])
    moved = call.fail("events_move", calendarId="primary", eventId=made["id"],
                      destination=marketing)  # fmt: skip
    assert (moved["code"], moved["field"]) == ("INVALID_VALUE", "destination")


class TestAfterCreation:
    @pytest.fixture
    def focus(self, call: Caller) -> dict[str, Any]:
        return call.ok("events_insert", calendarId="primary", summary="Deep work",
                       eventType="focusTime", **VALID["focusTime"])  # fmt: skip

    @pytest.mark.parametrize("tool", ["events_patch", "events_update"])
    @pytest.mark.parametrize("new", ["default", "outOfOffice"])
    def test_the_type_cannot_change(
        self, call: Caller, focus: dict[str, Any], tool: str, new: str
    ) -> None:
        error = call.fail(tool, calendarId="primary", eventId=focus["id"], eventType=new,
                          **VALID["focusTime"])  # fmt: skip
        assert (error["code"], error["field"]) == ("INVALID_VALUE", "eventType")
        assert error["expected"] == "focusTime" and error["got"] == new
        assert call.ok("events_get", calendarId="primary", eventId=focus["id"]) == focus

    def test_patch_keeps_type_and_block(self, call: Caller, focus: dict[str, Any]) -> None:
        patched = call.ok("events_patch", calendarId="primary", eventId=focus["id"],
                          summary="Deeper work")  # fmt: skip
        assert patched["eventType"] == "focusTime"
        assert patched["focusTimeProperties"] == focus["focusTimeProperties"]
        again = call.ok(
            "events_patch",
            calendarId="primary",
            eventId=focus["id"],
            eventType="focusTime",
            focusTimeProperties={"chatStatus": "available"},
        )
        assert again["focusTimeProperties"] == {"chatStatus": "available"}
        error = call.fail("events_patch", calendarId="primary", eventId=focus["id"],
                          transparency="transparent")  # fmt: skip
        assert (error["code"], error["field"]) == ("INVALID_VALUE", "transparency")

    def test_update_must_repeat_the_block(self, call: Caller, focus: dict[str, Any]) -> None:
        error = call.fail("events_update", calendarId="primary", eventId=focus["id"], **TIMED)
        assert (error["code"], error["field"]) == ("MISSING_REQUIRED_FIELD", "focusTimeProperties")
        assert "update replaces" in error["message"]
        kept = call.ok("events_update", calendarId="primary", eventId=focus["id"],
                       **VALID["focusTime"])  # fmt: skip
        assert kept["eventType"] == "focusTime" and "summary" not in kept


# -- suite v2: a recurring event names its time zone ---------------------------------------

WEEKLY = ["RRULE:FREQ=WEEKLY;BYDAY=MO"]
NY = "America/New_York"


@pytest.mark.parametrize("mode", ["structured", "google", "plain"])
def test_v2_refuses_a_series_without_time_zone_in_every_mode(session: Any, mode: str) -> None:
    env, call = session(error_mode=mode)
    obs = call("events_insert", calendarId="primary", summary="Sync", recurrence=WEEKLY, **TIMED)
    assert obs.error is not None and obs.error.error_type == "invalid_args"
    body = obs.error.model_dump()
    if mode == "structured":
        fields = [(e["code"], e["field"]) for e in body["error"]["errors"]]
        assert fields == [("MISSING_REQUIRED_FIELD", "start.timeZone"),
                          ("MISSING_REQUIRED_FIELD", "end.timeZone")]  # fmt: skip
        assert body["error"]["example"] == {
            "start": {**TIMED["start"], "timeZone": NY},
            "end": {**TIMED["end"], "timeZone": NY},
        }  # the calendar's zone, ready to send
        assert "cannot_complete" not in str(body) and "needs_clarification" not in str(body)
    elif mode == "google":
        assert body["error"]["message"] == "Missing time zone definition for start time."
        assert [e["reason"] for e in body["error"]["errors"]] == ["required", "required"]
        assert body["error"]["errors"][0]["location"] == "start.timeZone"
    else:
        assert "start.timeZone" in body["message"] and "error" not in body
    assert env.state.writes == 0


def test_v2_accepts_the_corrected_call_and_all_day_series(session: Any) -> None:
    _, call = session()
    error = call.fail("events_insert", calendarId="primary", summary="Sync", recurrence=WEEKLY,
                      **TIMED)  # fmt: skip
    made = call.ok("events_insert", calendarId="primary", summary="Sync", recurrence=WEEKLY,
                   **error["example"])  # fmt: skip
    assert made["start"]["timeZone"] == NY
    call.ok("events_insert", calendarId="primary", summary="Days", recurrence=WEEKLY, **ONE_DAY)
    one_off = call.ok("events_insert", calendarId="primary", summary="Once", **TIMED)
    error = call.fail("events_patch", calendarId="primary", eventId=one_off["id"],
                      recurrence=WEEKLY)  # making it recurring needs the zone too  # fmt: skip
    assert [e["field"] for e in error["errors"]] == ["start.timeZone", "end.timeZone"]
    moved = call.fail("events_patch", calendarId="primary", eventId=made["id"],
                      start=TIMED["start"])  # a new start must keep naming its zone  # fmt: skip
    assert moved["field"] == "start.timeZone"
    call.ok("events_patch", calendarId="primary", eventId=made["id"], summary="Weekly sync")


def test_v1_keeps_accepting_it(session: Any) -> None:
    """Suite v1's gold plans create a series without a zone; v1 must reproduce."""
    _, call = session(suite="1")
    made = call.ok("events_insert", calendarId="primary", summary="Sync", recurrence=WEEKLY,
                   **TIMED)  # fmt: skip
    assert made["recurrence"] == WEEKLY
    _, task = session(task="t1-weekday-standup", suite="1")
    assert task.env.suite_version == "1"


def test_an_unknown_suite_version_is_refused() -> None:
    from calendar_gym import CalendarEnv
    from mcpgym.errors import InvalidRequest

    with pytest.raises(InvalidRequest, match="unknown suite version"):
        CalendarEnv().reset(suite="9")


class TestImport:
    """events_import: a private copy of an event by its iCalUID; only default events."""

    def test_imports_a_copy_by_ical_uid(self, call: Caller) -> None:
        made = call.ok("events_import", calendarId="primary", iCalUID="abc123@external.test",
                       summary="Imported", **TIMED)  # fmt: skip
        assert (made["iCalUID"], made["eventType"]) == ("abc123@external.test", "default")
        found = call.ok("events_list", calendarId="primary", iCalUID="abc123@external.test")
        assert [e["id"] for e in found["items"]] == [made["id"]]
        again = call.fail("events_import", calendarId="primary", iCalUID="abc123@external.test",
                          **TIMED)  # fmt: skip
        assert (again["code"], again["field"]) == ("CONFLICT", "iCalUID")

    @pytest.mark.parametrize("kind", ["focusTime", "outOfOffice", "workingLocation", "birthday"])
    def test_only_default_events_can_be_imported(self, call: Caller, kind: str) -> None:
        error = call.fail("events_import", calendarId="primary", iCalUID="t@x.test",
                          eventType=kind, **TIMED)  # fmt: skip
        assert (error["code"], error["field"], error["expected"]) == (
            "INVALID_VALUE", "eventType", "default",
        )  # fmt: skip
        typed = call.fail("events_import", calendarId="primary", iCalUID="t@x.test",
                          focusTimeProperties={}, **TIMED)  # fmt: skip
        assert typed["field"] == "focusTimeProperties"  # not an argument of import

    def test_needs_ical_uid_writer_and_a_zone_for_a_series(self, session: Any) -> None:
        _, call = session()
        missing = call.fail("events_import", calendarId="primary", **TIMED)
        assert (missing["code"], missing["field"]) == ("MISSING_REQUIRED_FIELD", "iCalUID")
        series = call.fail("events_import", calendarId="primary", iCalUID="s@x.test",
                           recurrence=WEEKLY, **TIMED)  # fmt: skip
        assert series["field"] == "start.timeZone"
        _, bob = session(user="bob@acme.test")  # a reader of Marketing
        denied = bob.fail("events_import", calendarId=CALENDAR_IDS["marketing"],
                          iCalUID="b@x.test", **TIMED)  # fmt: skip
        assert (denied["code"], denied["required_role"]) == ("PERMISSION_DENIED", "writer")
