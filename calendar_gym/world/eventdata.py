"""Events between the API shape and the database row: times in, resources out.

`times_from_body` turns validated `start`/`end` objects into stored columns (UTC instants plus
zones, or dates); `instance_row` derives one occurrence of a recurring master; `render_event`
produces the Calendar API `Event` resource with offsets in the right zone, or the busy-only stub a
non-owner sees for a private event.

Example:
    >>> cols = times_from_body({"dateTime": "2026-03-05T10:00:00-05:00"},
    ...                        {"dateTime": "2026-03-05T16:00:00", "timeZone": "Europe/London"},
    ...                        "America/New_York")
    >>> cols["start"], cols["end_"], cols["end_tz"]
    ('2026-03-05T15:00:00Z', '2026-03-05T16:00:00Z', 'Europe/London')
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import date, datetime, timedelta
from typing import Any

from calendar_gym.world.errors import ApiError
from calendar_gym.world.timeutil import (
    date_start_instant,
    format_in_zone,
    parse_date,
    parse_event_datetime,
    parse_utc_text,
    to_utc_text,
)

__all__ = [
    "PRIVATE_VISIBILITIES",
    "event_bounds",
    "instance_row",
    "make_etag",
    "original_start_value",
    "render_event",
    "times_from_body",
]

PRIVATE_VISIBILITIES = frozenset({"private", "confidential"})


def make_etag(*parts: object) -> str:
    """A deterministic etag for a resource version."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return f'"{int(digest[:13], 16)}"'


def times_from_body(
    start: Mapping[str, Any], end: Mapping[str, Any], default_tz: str
) -> dict[str, Any]:
    """Stored time columns for validated `start`/`end` objects.

    Raises `ApiError(INVALID_VALUE)` when one is a date and the other a date-time, or when the
    end is not after the start.
    """
    if ("date" in start) != ("date" in end):
        raise ApiError(
            "INVALID_VALUE",
            "start and end must both be dateTime (timed event) or both be date (all-day event).",
            field="end",
            expected="the same kind as start: " + ("date" if "date" in start else "dateTime"),
            got=dict(end),
            hint="Use start.date/end.date for all-day events, else start.dateTime/end.dateTime.",
        )
    if "date" in start:
        first, last = parse_date(start["date"]), parse_date(end["date"])
        if last <= first:
            raise _empty_range("end.date", end["date"], start["date"], all_day=True)
        return {
            "all_day": 1,
            "start": first.isoformat(),
            "end_": last.isoformat(),
            "start_tz": None,
            "end_tz": None,
        }
    begin = parse_event_datetime(start["dateTime"], start.get("timeZone"))
    finish = parse_event_datetime(end["dateTime"], end.get("timeZone"))
    if finish <= begin:
        shown_tz = end.get("timeZone") or start.get("timeZone") or default_tz
        raise _empty_range(
            "end.dateTime",
            end["dateTime"],
            format_in_zone(begin, shown_tz),
            all_day=False,
            suggestion=format_in_zone(begin + timedelta(hours=1), shown_tz),
        )
    return {
        "all_day": 0,
        "start": to_utc_text(begin),
        "end_": to_utc_text(finish),
        "start_tz": start.get("timeZone"),
        "end_tz": end.get("timeZone") or start.get("timeZone"),
    }


def _empty_range(
    field: str, got: str, start_text: str, *, all_day: bool, suggestion: str | None = None
) -> ApiError:
    if all_day:
        hint = f"end.date is exclusive: a one-day event on {start_text} ends on the next day."
        example = {"end": {"date": (parse_date(start_text) + timedelta(days=1)).isoformat()}}
    else:
        hint = f"Make end later than start ({start_text}), e.g. one hour later: {suggestion}."
        example = {"end": {"dateTime": suggestion}}
    return ApiError(
        "INVALID_VALUE",
        f"{field} ({got}) must be after the start ({start_text}).",
        field=field,
        expected=f"a time after {start_text}",
        got=got,
        hint=hint,
        example=example,
        google_message="The specified time range is empty.",
        google_reason="timeRangeEmpty",
    )


def event_bounds(row: Mapping[str, Any], cal_tz: str) -> tuple[datetime, datetime]:
    """The instants an event occupies (all-day events span whole days in the calendar's zone)."""
    if row["all_day"]:
        return (
            date_start_instant(date.fromisoformat(row["start"]), cal_tz),
            date_start_instant(date.fromisoformat(row["end_"]), cal_tz),
        )
    return parse_utc_text(row["start"]), parse_utc_text(row["end_"])


def original_start_value(original: datetime | date) -> str:
    """The stored form of an instance's original start."""
    return to_utc_text(original) if isinstance(original, datetime) else original.isoformat()


def instance_row(
    master: Mapping[str, Any], original: datetime | date, suffix: str
) -> dict[str, Any]:
    """The row of one occurrence of `master` starting at `original`, as if it were stored."""
    row = dict(master)
    if master["all_day"]:
        assert isinstance(original, date) and not isinstance(original, datetime)
        length = date.fromisoformat(master["end_"]) - date.fromisoformat(master["start"])
        row["start"], row["end_"] = original.isoformat(), (original + length).isoformat()
    else:
        assert isinstance(original, datetime)
        length = parse_utc_text(master["end_"]) - parse_utc_text(master["start"])
        row["start"], row["end_"] = to_utc_text(original), to_utc_text(original + length)
    row["id"] = f"{master['id']}_{suffix}"
    row["recurrence"] = None
    row["recurring_event_id"] = master["id"]
    row["original_start"] = original_start_value(original)
    return row


def _time(value: str, all_day: bool, tz: str | None, shown_tz: str) -> dict[str, Any]:
    if all_day:
        return {"date": value}
    return {"dateTime": format_in_zone(parse_utc_text(value), shown_tz), "timeZone": tz or shown_tz}


def render_event(
    row: Mapping[str, Any],
    *,
    cal_tz: str,
    user: str,
    names: Mapping[str, str],
    tz_override: str | None = None,
    busy_only: bool = False,
) -> dict[str, Any]:
    """The API `Event` resource for a row (or instance row) as `user` may see it."""
    all_day = bool(row["all_day"])
    start_zone = row["start_tz"] or cal_tz
    end_zone = row["end_tz"] or start_zone
    out: dict[str, Any] = {
        "kind": "calendar#event",
        "etag": row["etag"],
        "id": row["id"],
        "status": row["status"],
    }
    if busy_only:
        out.update(
            start=_time(row["start"], all_day, row["start_tz"], tz_override or start_zone),
            end=_time(row["end_"], all_day, row["end_tz"], tz_override or end_zone),
            visibility=row["visibility"],
            transparency=row["transparency"],
        )
        if row["recurring_event_id"]:
            out["recurringEventId"] = row["recurring_event_id"]
        return out
    organizer = row["organizer"]
    out.update(
        {
            "htmlLink": f"https://calendar.google.com/calendar/event?eid={row['id']}",
            "created": row["created"],
            "updated": row["updated"],
            "summary": row["summary"],
            "description": row["description"],
            "location": row["location"],
            "colorId": row["color_id"],
            "creator": _person(row["creator"], user, names),
            "organizer": _person(organizer, user, names),
            "start": _time(row["start"], all_day, row["start_tz"], tz_override or start_zone),
            "end": _time(row["end_"], all_day, row["end_tz"], tz_override or end_zone),
            "recurrence": json.loads(row["recurrence"]) if row["recurrence"] else None,
            "recurringEventId": row["recurring_event_id"],
            "transparency": row["transparency"],
            "visibility": row["visibility"],
            "iCalUID": row["ical_uid"],
            "sequence": row["sequence"],
        }
    )
    if row["original_start"]:
        out["originalStartTime"] = _time(
            row["original_start"], all_day, row["start_tz"], tz_override or start_zone
        )
    attendees = json.loads(row["attendees"])
    if attendees:
        for a in attendees:
            if a["email"] == user:
                a["self"] = True
            if a["email"] == organizer:
                a["organizer"] = True
        out["attendees"] = attendees
    out["reminders"] = json.loads(row["reminders"]) if row["reminders"] else {"useDefault": True}
    if row["extended"]:
        out["extendedProperties"] = json.loads(row["extended"])
    if row["guest_options"]:
        out.update(json.loads(row["guest_options"]))
    out["eventType"] = row["event_type"]
    if row["type_properties"]:
        out.update(json.loads(row["type_properties"]))
    return {k: v for k, v in out.items() if v is not None}


def _person(email: str, user: str, names: Mapping[str, str]) -> dict[str, Any]:
    person: dict[str, Any] = {"email": email}
    if email in names:
        person["displayName"] = names[email]
    if email == user:
        person["self"] = True
    return person
