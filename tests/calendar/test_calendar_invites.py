"""Invitee copies (suite v3 on): an event shows on the primary calendar of every guest in its
organizer's domain — listed, read, counted busy — as Google Calendar adds an invitation to the
invitee's calendar; private copies follow `visibility: private`; writes go to the organizer.

Each test acts through the real tools (`CalendarEnv.step`), as Bob or as Alice, on every read
path a copy can show on (`events_list` with and without `singleEvents`, `events_get`,
`events_instances`, `freebusy_query`) and every write path that could change it through the
guest's calendar (patch, update, delete, move)."""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym import CalendarEnv
from mcpgym.types import CallToolAction

ALICE, BOB, CAROL = "alice@acme.test", "bob@acme.test", "carol@acme.test"
RIVERA = "alex.rivera@globex.test"
DAY = {"timeMin": "2026-03-05T00:00:00-05:00", "timeMax": "2026-03-06T00:00:00-05:00"}
START = {"dateTime": "2026-03-05T13:00:00-05:00"}
END = {"dateTime": "2026-03-05T13:30:00-05:00"}


def _env(user: str = ALICE, suite: str = "3", **reset: Any) -> tuple[CalendarEnv, Any]:
    env = CalendarEnv()
    env.reset(user=user, suite=suite, **reset)

    def call(tool: str, **arguments: Any) -> Any:
        obs = env.step(CallToolAction(tool_name=tool, arguments=arguments))
        return obs.error.model_dump()["error"] if obs.error else obs.result

    return env, call


def _invite(call: Any, *guests: str, **extra: Any) -> dict[str, Any]:
    return call("events_insert", calendarId="primary", summary="Design crit", start=START,
                end=END, attendees=[{"email": g} for g in guests], **extra)  # fmt: skip


def _ids(listing: dict[str, Any]) -> set[str]:
    return {i["id"] for i in listing.get("items", [])}


def _seeded(calendar: str, *guests: str, **extra: Any) -> dict[str, Any]:
    event = {"id": EVENT, "calendar": calendar, "summary": "Design crit",
             "start": "2026-03-05T13:00:00", "end": "2026-03-05T13:30:00",
             "attendees": [*guests, calendar], **extra}  # fmt: skip
    return {"events": [event]}


EVENT = "i0a1b2c3d4e5f6a7b8c9d0e1"


@pytest.mark.parametrize("single", [False, True])
def test_an_invitee_sees_the_event_on_their_own_calendar(single: bool) -> None:
    patch = _seeded(ALICE, BOB, RIVERA)
    env, call = _env(BOB, seed_patch=patch)
    listed = call("events_list", calendarId="primary", singleEvents=single, **DAY)
    copy = next(i for i in listed["items"] if i["id"] == EVENT)
    assert copy["summary"] == "Design crit" and copy["organizer"]["email"] == ALICE
    assert any(a["email"] == BOB and a.get("self") for a in copy["attendees"])
    got = call("events_get", calendarId=BOB, eventId=EVENT)
    assert got["iCalUID"] == copy["iCalUID"] and got["id"] == EVENT
    env.close()
    env, call = _env(RIVERA, seed_patch=patch)  # another domain than the organizer's: no copy
    assert EVENT not in _ids(call("events_list", calendarId="primary", **DAY))
    env.close()


def test_the_organizers_change_shows_on_every_copy_and_a_deleted_event_leaves_them() -> None:
    env, call = _env()
    made = _invite(call, BOB, CAROL)
    call("events_patch", calendarId="primary", eventId=made["id"], summary="Design review")
    assert call("events_get", calendarId=BOB, eventId=made["id"])["summary"] == "Design review"
    call("events_delete", calendarId="primary", eventId=made["id"])
    assert made["id"] not in _ids(call("events_list", calendarId=BOB, **DAY))
    env.close()


def test_a_seed_invitation_is_on_the_guests_calendar_from_suite_v3_only() -> None:
    shown = {}
    for suite in ("2", "3"):
        env, call = _env(BOB, suite=suite)
        listed = call("events_list", calendarId="primary", q="Onboarding session")
        shown[suite] = {i["organizer"]["email"] for i in listed["items"]}
        env.close()
    assert shown == {"2": set(), "3": {"dana@acme.test"}}


def test_free_busy_counts_an_invitation_unless_the_guest_declined() -> None:
    busy = {}
    for status in ("needsAction", "declined"):
        env, call = _env()
        call("events_insert", calendarId="primary", summary="Design crit", start=START, end=END,
             attendees=[{"email": BOB, "responseStatus": status}])  # fmt: skip
        got = call("freebusy_query", items=[{"id": BOB}], **DAY)
        busy[status] = [b["start"] for b in got["calendars"][BOB]["busy"]]
        env.close()
    assert "2026-03-05T18:00:00Z" in busy["needsAction"]
    assert "2026-03-05T18:00:00Z" not in busy["declined"]


def test_a_private_invitation_shows_its_details_to_guests_and_a_stub_to_others() -> None:
    patch = _seeded(CAROL, BOB, visibility="private", location="Room 4")
    env, call = _env(BOB, seed_patch=patch)  # Bob, a guest, on his own calendar: details
    got = call("events_get", calendarId=BOB, eventId=EVENT)
    assert (got["summary"], got["location"]) == ("Design crit", "Room 4")
    env.close()
    env, call = _env(ALICE, seed_patch=patch)  # Alice reads Bob's calendar, not a guest: stub
    got = call("events_get", calendarId=BOB, eventId=EVENT)
    items = call("events_list", calendarId=BOB, **DAY)["items"]
    listed = next(i for i in items if i["id"] == EVENT)
    assert got.get("summary") is None and got.get("location") is None
    assert listed.get("summary") is None and got["visibility"] == "private"
    env.close()


@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("events_patch", {"summary": "Mine now"}),
        ("events_update", {"summary": "Mine now", "start": START, "end": END}),
        ("events_delete", {}),
        ("events_move", {"destination": "primary"}),
    ],
)
def test_a_write_through_the_guests_copy_is_refused_for_the_organizer(
    tool: str, extra: dict[str, Any]
) -> None:
    env, call = _env(BOB, seed_patch=_seeded(CAROL, BOB))
    error = call(tool, calendarId=BOB, eventId=EVENT, **extra)
    assert error["code"] == "PERMISSION_DENIED", error
    assert "organizer" in error["message"] and CAROL in error["hint"]
    assert call("events_get", calendarId=BOB, eventId=EVENT)["summary"] == "Design crit"
    env.close()


def test_a_recurring_invitation_expands_on_the_guests_calendar() -> None:
    env, call = _env()
    made = call("events_insert", calendarId="primary", summary="Weekly crit",
                start={**START, "timeZone": "America/New_York"},
                end={**END, "timeZone": "America/New_York"},
                recurrence=["RRULE:FREQ=WEEKLY;COUNT=3"], attendees=[{"email": BOB}])  # fmt: skip
    listed = call("events_list", calendarId=BOB, singleEvents=True,
                  timeMin="2026-03-01T00:00:00Z", timeMax="2026-04-01T00:00:00Z")  # fmt: skip
    mine = [i for i in listed["items"] if i.get("recurringEventId") == made["id"]]
    assert len(mine) == 3
    shown = call("events_instances", calendarId=BOB, eventId=made["id"])
    assert [i["id"] for i in shown["items"]] == sorted(i["id"] for i in mine)
    env.close()
