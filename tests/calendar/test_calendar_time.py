"""Time: offsets survive round trips, daylight-saving changes, recurrence and its exceptions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from calendar_gym import EVENT_IDS
from helpers.cal import Caller

ONE_ON_ONE = EVENT_IDS["one_on_one"]


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ({"dateTime": "2026-03-05T10:00:00+05:30"}, {"dateTime": "2026-03-05T11:00:00+05:30"}),
        ({"dateTime": "2026-03-05T15:00:00Z"}, {"dateTime": "2026-03-05T16:00:00Z"}),
        ({"dateTime": "2026-03-05T10:00:00-08:00"}, {"dateTime": "2026-03-05T10:30:00-08:00"}),
        (
            {"dateTime": "2026-03-05T09:00:00", "timeZone": "Asia/Tokyo"},
            {"dateTime": "2026-03-05T10:00:00", "timeZone": "Asia/Tokyo"},
        ),
    ],
)
def test_offsets_survive_a_round_trip(
    call: Caller, start: dict[str, Any], end: dict[str, Any]
) -> None:
    created = call.ok("events_insert", calendarId="primary", summary="x", start=start, end=end)
    fetched = call.ok("events_get", calendarId="primary", eventId=created["id"])
    for sent, got in ((start, fetched["start"]), (end, fetched["end"])):
        assert got["dateTime"][-6] in "+-" or got["dateTime"].endswith("Z"), "always an offset"
        if "timeZone" in sent:
            assert got["timeZone"] == sent["timeZone"]
            assert got["dateTime"].startswith(sent["dateTime"])  # same wall time in its zone
            assert got["dateTime"].endswith("+09:00")
        else:
            assert instant(got["dateTime"]) == instant(sent["dateTime"])


def test_local_time_with_zone_is_stored_as_utc_and_rendered_with_offset(call: Caller) -> None:
    created = call.ok(
        "events_insert",
        calendarId="primary",
        summary="London call",
        start={"dateTime": "2026-03-05T15:00:00", "timeZone": "Europe/London"},
        end={"dateTime": "2026-03-05T16:00:00", "timeZone": "Europe/London"},
    )
    assert created["start"] == {
        "dateTime": "2026-03-05T15:00:00+00:00",
        "timeZone": "Europe/London",
    }
    listed = call.ok(
        "events_list",
        calendarId="primary",
        timeMin="2026-03-05T09:59:00-05:00",
        timeMax="2026-03-05T10:01:00-05:00",
        timeZone="America/New_York",
    )
    (item,) = [e for e in listed["items"] if e["id"] == created["id"]]
    assert item["start"]["dateTime"] == "2026-03-05T10:00:00-05:00"  # rendered in the asked zone
    assert item["start"]["timeZone"] == "Europe/London"


def test_event_across_the_dst_change(call: Caller) -> None:
    """Saturday 22:00 to Sunday 04:00 in New York on 8 March 2026 lasts five hours, not six."""
    created = call.ok(
        "events_insert",
        calendarId="primary",
        summary="Overnight deploy",
        start={"dateTime": "2026-03-07T22:00:00", "timeZone": "America/New_York"},
        end={"dateTime": "2026-03-08T04:00:00", "timeZone": "America/New_York"},
    )
    assert created["start"]["dateTime"] == "2026-03-07T22:00:00-05:00"
    assert created["end"]["dateTime"] == "2026-03-08T04:00:00-04:00"
    length = instant(created["end"]["dateTime"]) - instant(created["start"]["dateTime"])
    assert length.total_seconds() == 5 * 3600
    busy = call.ok(
        "freebusy_query",
        timeMin="2026-03-07T00:00:00Z",
        timeMax="2026-03-09T00:00:00Z",
        items=[{"id": "primary"}],
    )["calendars"]["primary"]["busy"]
    assert {"start": "2026-03-08T03:00:00Z", "end": "2026-03-08T08:00:00Z"} in busy


def test_a_local_time_skipped_by_dst_is_rejected(call: Caller) -> None:
    error = call.fail(
        "events_insert",
        calendarId="primary",
        summary="x",
        start={"dateTime": "2026-03-08T02:30:00", "timeZone": "America/New_York"},
        end={"dateTime": "2026-03-08T03:30:00", "timeZone": "America/New_York"},
    )
    assert (error["code"], error["field"]) == ("INVALID_VALUE", "start.dateTime")
    assert "does not exist" in error["message"]


def test_weekly_recurrence_keeps_local_time_across_dst(call: Caller) -> None:
    listed = call.ok(
        "events_list",
        calendarId="primary",
        timeMin="2026-02-09T00:00:00-05:00",
        timeMax="2026-03-31T00:00:00-04:00",
        singleEvents=True,
        orderBy="startTime",
        q="1:1",
    )
    starts = {e["id"].rsplit("_", 1)[1]: e["start"]["dateTime"] for e in listed["items"]}
    assert starts == {
        "20260209T150000Z": "2026-02-09T10:00:00-05:00",
        # 2026-02-16 (Presidents' Day) is cancelled
        "20260223T150000Z": "2026-02-23T10:00:00-05:00",
        "20260302T150000Z": "2026-03-02T10:00:00-05:00",
        "20260309T140000Z": "2026-03-09T10:00:00-04:00",  # same wall time, new offset
        "20260316T140000Z": "2026-03-16T10:00:00-04:00",
        "20260323T140000Z": "2026-03-23T11:00:00-04:00",  # moved by a seeded exception
        "20260330T140000Z": "2026-03-30T10:00:00-04:00",
    }
    for item in listed["items"]:
        assert item["recurringEventId"] == ONE_ON_ONE
        assert "originalStartTime" in item
    masters = call.ok("events_list", calendarId="primary", q="1:1")["items"]
    assert [m["id"] for m in masters if "recurrence" in m] == [ONE_ON_ONE]


def test_instances_and_all_day_monthly_series(session: Any) -> None:
    from calendar_gym import CALENDAR_IDS

    _, call = session()
    got = call.ok(
        "events_instances",
        calendarId=CALENDAR_IDS["finance"],
        eventId=EVENT_IDS["expenses_due"],
        timeMin="2026-01-01T00:00:00Z",
        timeMax="2026-06-01T00:00:00Z",
    )
    assert [i["start"]["date"] for i in got["items"]] == [
        "2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31",
    ]  # fmt: skip
    assert got["items"][1]["id"] == EVENT_IDS["expenses_due"] + "_20260228"


def test_new_series_with_count_and_until(call: Caller) -> None:
    series = call.ok(
        "events_insert",
        calendarId="primary",
        summary="Standup",
        start={"dateTime": "2026-03-05T09:00:00", "timeZone": "America/New_York"},
        end={"dateTime": "2026-03-05T09:15:00", "timeZone": "America/New_York"},
        recurrence=["RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;UNTIL=20260312"],
    )
    got = call.ok("events_instances", calendarId="primary", eventId=series["id"])
    assert [i["start"]["dateTime"] for i in got["items"]] == [
        "2026-03-05T09:00:00-05:00", "2026-03-06T09:00:00-05:00", "2026-03-09T09:00:00-04:00",
        "2026-03-10T09:00:00-04:00", "2026-03-11T09:00:00-04:00", "2026-03-12T09:00:00-04:00",
    ]  # fmt: skip


def test_editing_one_instance_leaves_the_others(call: Caller) -> None:
    instance = f"{ONE_ON_ONE}_20260309T140000Z"
    edited = call.ok(
        "events_patch",
        calendarId="primary",
        eventId=instance,
        summary="1:1 Alice / Bob (remote)",
        start={"dateTime": "2026-03-09T13:00:00-04:00"},
        end={"dateTime": "2026-03-09T13:30:00-04:00"},
    )
    assert edited["id"] == instance
    assert edited["recurringEventId"] == ONE_ON_ONE
    assert edited["originalStartTime"]["dateTime"] == "2026-03-09T10:00:00-04:00"
    again = call.ok("events_get", calendarId="primary", eventId=instance)
    assert again["summary"] == "1:1 Alice / Bob (remote)"
    assert again["start"]["dateTime"] == "2026-03-09T13:00:00-04:00"
    nxt = call.ok("events_get", calendarId="primary", eventId=f"{ONE_ON_ONE}_20260316T140000Z")
    assert (nxt["summary"], nxt["start"]["dateTime"]) == (
        "1:1 Alice / Bob",
        "2026-03-16T10:00:00-04:00",
    )
    master = call.ok("events_get", calendarId="primary", eventId=ONE_ON_ONE)
    assert master["summary"] == "1:1 Alice / Bob"
    day = call.ok(
        "events_list",
        calendarId="primary",
        timeMin="2026-03-09T00:00:00-04:00",
        timeMax="2026-03-10T00:00:00-04:00",
        singleEvents=True,
        q="1:1",
    )["items"]
    assert [(e["id"], e["start"]["dateTime"]) for e in day] == [
        (instance, "2026-03-09T13:00:00-04:00")
    ]
    error = call.fail(
        "events_patch", calendarId="primary", eventId=instance, recurrence=["RRULE:FREQ=DAILY"]
    )
    assert error["code"] == "FORBIDDEN_OPERATION"


def test_cancelling_one_instance(call: Caller) -> None:
    instance = f"{ONE_ON_ONE}_20260316T140000Z"
    assert call.ok("events_delete", calendarId="primary", eventId=instance)["status"] == "cancelled"
    window = {"timeMin": "2026-03-16T00:00:00-04:00", "timeMax": "2026-03-17T00:00:00-04:00"}
    shown = call.ok("events_list", calendarId="primary", singleEvents=True, q="1:1", **window)
    assert shown["items"] == []
    deleted = call.ok(
        "events_list", calendarId="primary", singleEvents=True, q="1:1", showDeleted=True, **window
    )
    assert [(e["id"], e["status"]) for e in deleted["items"]] == [(instance, "cancelled")]
    assert call.ok("events_get", calendarId="primary", eventId=instance)["status"] == "cancelled"
    assert call.fail("events_delete", calendarId="primary", eventId=instance)["code"] == "NOT_FOUND"
    still = call.ok("events_get", calendarId="primary", eventId=f"{ONE_ON_ONE}_20260309T140000Z")
    assert still["status"] == "confirmed"


def test_deleting_the_master_cancels_the_series(call: Caller) -> None:
    call.ok("events_delete", calendarId="primary", eventId=ONE_ON_ONE)
    listed = call.ok(
        "events_list",
        calendarId="primary",
        singleEvents=True,
        q="1:1",
        timeMin="2026-03-01T00:00:00Z",
        timeMax="2026-04-01T00:00:00Z",
    )
    assert listed["items"] == []
    assert call.ok("events_get", calendarId="primary", eventId=ONE_ON_ONE)["status"] == "cancelled"


def test_an_instance_id_that_is_not_an_occurrence_is_not_found(call: Caller) -> None:
    error = call.fail("events_get", calendarId="primary", eventId=f"{ONE_ON_ONE}_20260310T140000Z")
    assert error["code"] == "NOT_FOUND"


def test_settings_state_the_frozen_now(session: Any) -> None:
    _, call = session(now="2026-07-01T12:00:00Z", user="carol@acme.test")
    assert call.ok("settings_get", setting="now")["value"] == "2026-07-01T13:00:00+01:00"
    assert call.ok("settings_get", setting="timezone")["value"] == "Europe/London"
