"""Calendar Gym's size limits (docs/calendar_gym.md "Limits"): field sizes as Google bounds them
(a description of 8,192 characters, extended properties of 300 keys of 44 and values of 1,024)
and ours (titles, locations, guests, recurrence lines), events per calendar and per world, event
text per calendar, calendars per world — each refused with a structured error — and list pages
cut by bytes so that no page, whatever `maxResults`, costs more than `PAGE_BUDGET` to send."""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym.events import write
from calendar_gym.tools import models
from calendar_gym.tools.calendars import CALENDARS_MAX
from calendar_gym.tools.context import PAGE_BUDGET
from helpers.cal import Caller, make

WHEN = {"start": {"dateTime": "2026-03-05T10:00:00Z"}, "end": {"dateTime": "2026-03-05T11:00:00Z"}}


@pytest.fixture
def call() -> Any:
    env, caller = make()
    yield caller
    env.close()


def _insert(call: Caller, **fields: Any) -> Any:
    return call("events_insert", calendarId="primary", **WHEN, **fields)


@pytest.mark.parametrize(
    ("field", "at_limit", "over"),
    [
        ("description", "d" * models.DESCRIPTION_MAX, "d" * (models.DESCRIPTION_MAX + 1)),
        ("summary", "s" * models.TEXT_MAX, "s" * (models.TEXT_MAX + 1)),
        ("location", "l" * models.TEXT_MAX, "l" * (models.TEXT_MAX + 1)),
        (
            "attendees",
            [{"email": f"g{i}@acme.test"} for i in range(models.ATTENDEES_MAX)],
            [{"email": f"g{i}@acme.test"} for i in range(models.ATTENDEES_MAX + 1)],
        ),
        (
            "extendedProperties",
            {"private": {f"k{i}": "v" for i in range(models.PROPERTIES_MAX)}},
            {"private": {"k" * (models.PROPERTY_KEY_MAX + 1): "v"}},
        ),
    ],
)
def test_field_sizes_are_bounded(call: Caller, field: str, at_limit: Any, over: Any) -> None:
    assert _insert(call, **{field: at_limit}).error is None
    obs = _insert(call, **{field: over})
    assert obs.error is not None and obs.error.error_type == "invalid_args", obs.error
    schema = call.env.tool_specs["events_insert"].input_schema  # the agent sees the bound too
    assert "maxLength" in str(schema) and "maxItems" in str(schema)


def test_events_per_calendar(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    held = len(call.env.store.all("SELECT id FROM events WHERE calendar_id = 'alice@acme.test'"))
    monkeypatch.setattr(write, "EVENTS_PER_CALENDAR", held + 2)
    assert _insert(call).error is None and _insert(call).error is None
    error = call.fail("events_insert", calendarId="primary", **WHEN)
    assert error["code"] == "QUOTA_EXCEEDED" and error["http_status"] == 403
    assert f"more than {held + 2} events" in error["message"]
    first = call.ok("events_list", calendarId="primary", maxResults=1)["items"][0]
    call.ok("events_patch", calendarId="primary", eventId=first["id"], summary="renamed")


def test_event_text_per_calendar(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(write, "CALENDAR_TEXT_BYTES", 60_000)
    for _ in range(20):
        obs = _insert(call, description="x" * 8000)
        if obs.error is not None:
            break
    error = obs.error.model_dump()["error"]  # pyright: ignore[reportOptionalMemberAccess]
    assert error["code"] == "QUOTA_EXCEEDED" and "KiB of event text" in error["message"]


def test_events_per_world(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    total = len(call.env.store.all("SELECT id FROM events"))
    monkeypatch.setattr(write, "WORLD_EVENTS", total + 1)
    assert _insert(call).error is None
    assert (
        "in all its calendars"
        in call.fail("events_insert", calendarId="primary", **WHEN)["message"]
    )


def test_calendars_per_world(call: Caller) -> None:
    held = len(call.env.store.all("SELECT id FROM calendars"))
    for i in range(CALENDARS_MAX - held):
        call.ok("calendars_insert", summary=f"c{i}")
    assert call.fail("calendars_insert", summary="one more")["code"] == "QUOTA_EXCEEDED"


def test_a_page_is_cut_by_bytes_and_paging_still_sees_everything(call: Caller) -> None:
    for i in range(60):
        _insert(call, summary=f"bulk {i}", description="z" * models.DESCRIPTION_MAX)
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = call.ok("events_list", calendarId="primary", maxResults=2500, pageToken=token)
        pages += 1
        size = sum(len(str(item)) for item in page["items"])
        assert size < PAGE_BUDGET + 2 * models.DESCRIPTION_MAX
        seen += [item["id"] for item in page["items"]]
        token = page.get("nextPageToken")
        if token is None:
            break
    assert pages > 1 and len(seen) == len(set(seen))
    assert sum(1 for i in seen if i) >= 60
