"""Writing events: insert, patch/update (series, single events or one instance), delete, move.

A change to one occurrence of a recurring event is stored as an exception row whose id is the
instance id and whose `original_start` ties it to the master; deleting marks a row (or a new
exception) `cancelled`. Every write bumps `sequence`, stamps `updated` from the store's logical
clock and recomputes the etag.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from calendar_gym.events.rules import PROPERTY_BLOCKS, WriteRules, check_write
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import make_etag, times_from_body
from calendar_gym.world.store import Store
from calendar_gym.world.timeutil import format_in_zone, parse_utc_text

__all__ = [
    "CALENDAR_TEXT_BYTES",
    "EVENTS_PER_CALENDAR",
    "EVENT_COLUMNS",
    "TEXT_COLUMNS",
    "WORLD_EVENTS",
    "delete_event",
    "insert_event",
    "move_event",
    "write_event",
]

EVENTS_PER_CALENDAR = 1000
"""Stored rows one calendar keeps (events, series and changed instances alike)."""
WORLD_EVENTS = 3000
"""Stored rows all calendars of one world keep together (a free/busy query reads them all)."""
CALENDAR_TEXT_BYTES = 2 * 1024 * 1024
"""Characters of text (`TEXT_COLUMNS`) one calendar's events keep in all. With the count and the
field sizes of `calendar_gym.tools.models`, what a calendar costs to hold, and what any call
costs to read it, is bounded (docs/calendar_gym.md "Limits")."""
TEXT_COLUMNS = (
    "summary", "description", "location", "attendees", "extended", "recurrence", "reminders",
    "type_properties",
)  # fmt: skip

EVENT_COLUMNS = (
    "calendar_id", "id", "ical_uid", "status", "summary", "description", "location", "color_id",
    "visibility", "transparency", "all_day", "start", "end_", "start_tz", "end_tz", "recurrence",
    "recurring_event_id", "original_start", "creator", "organizer", "attendees", "reminders",
    "extended", "guest_options", "created", "updated", "sequence", "etag", "event_type",
    "type_properties",
)  # fmt: skip
_SIMPLE = {
    "summary": "summary",
    "description": "description",
    "location": "location",
    "colorId": "color_id",
    "visibility": "visibility",
    "transparency": "transparency",
    "status": "status",
}
_GUEST_OPTIONS = ("guestsCanModify", "guestsCanInviteOthers", "guestsCanSeeOtherGuests")
_DEFAULTS: dict[str, Any] = {
    "summary": None,
    "description": None,
    "location": None,
    "color_id": None,
    "visibility": "default",
    "transparency": "opaque",
    "status": "confirmed",
    "recurrence": None,
    "attendees": "[]",
    "reminders": None,
    "extended": None,
    "guest_options": None,
    "type_properties": None,  # the type itself is kept: it cannot change
}


def _text_bytes(row: Mapping[str, Any]) -> int:
    return sum(len(row[c] or "") for c in TEXT_COLUMNS)


_HELD = (
    "SELECT count(*) AS n, coalesce(sum({}), 0) AS size FROM events WHERE calendar_id = ?".format(
        " + ".join(f"coalesce(length({c}), 0)" for c in TEXT_COLUMNS)
    )
)


def _check_room(store: Store, row: Mapping[str, Any]) -> None:
    """Refuse a write that would pass the calendar's event count or text bytes."""
    cal, size = row["calendar_id"], _text_bytes(row)
    old = store.one("SELECT * FROM events WHERE calendar_id = ? AND id = ?", (cal, row["id"]))
    held = store.one(_HELD, (cal,))
    count = held["n"] + (old is None)
    total = held["size"] - (_text_bytes(old) if old is not None else 0) + size
    world = store.one("SELECT count(*) AS n FROM events")["n"] + (old is None)
    if count <= EVENTS_PER_CALENDAR and total <= CALENDAR_TEXT_BYTES and world <= WORLD_EVENTS:
        return
    if world > WORLD_EVENTS:
        what, where = f"{WORLD_EVENTS} events in all its calendars", "This world"
    elif count > EVENTS_PER_CALENDAR:
        what, where = f"{EVENTS_PER_CALENDAR} events", f"Calendar {cal}"
    else:
        what = (
            f"{CALENDAR_TEXT_BYTES // 1024} KiB of event text (titles, descriptions, guests, ...)"
        )
        where = f"Calendar {cal}"
    raise ApiError(
        "QUOTA_EXCEEDED",
        f"{where} would hold more than {what}, the most it keeps.",
        field="calendarId",
        expected=f"a calendar holding at most {what}",
        got=cal,
        hint="Delete events you no longer need, shorten long texts, or use another calendar.",
        google_message="Calendar usage limits exceeded.",
    )


def _save(store: Store, row: Mapping[str, Any]) -> None:
    _check_room(store, row)
    marks = ", ".join("?" for _ in EVENT_COLUMNS)
    store.run(
        f"INSERT OR REPLACE INTO events ({', '.join(EVENT_COLUMNS)}) VALUES ({marks})",
        [row[c] for c in EVENT_COLUMNS],
    )


def _stamp(store: Store, row: dict[str, Any]) -> None:
    row["updated"] = store.tick()
    row["etag"] = make_etag(row["calendar_id"], row["id"], row["sequence"], row["updated"])


_KEPT_REPLY = ("responseStatus", "comment", "additionalGuests", "displayName")
"""A guest's own answer, kept when a write lists the guest again without it (Google keeps a
reply across the organizer's edits: re-sending the guest list must not reset who accepted)."""


def _attendees(
    store: Store, items: list[dict[str, Any]], organizer: str, previous: str | None = None
) -> str:
    names = {r["email"]: r["name"] for r in store.all("SELECT email, name FROM users")}
    try:
        before = {str(g.get("email", "")).lower(): g for g in json.loads(previous or "[]")}
    except (TypeError, ValueError, AttributeError):
        before = {}
    out = []
    seen: set[str] = set()
    for item in items:
        entry = dict(item)
        entry["email"] = entry["email"].strip().lower()
        if entry["email"] in seen:
            continue
        seen.add(entry["email"])
        for key in _KEPT_REPLY:
            if key not in entry and key in before.get(entry["email"], {}):
                entry[key] = before[entry["email"]][key]
        if entry["email"] in names:
            entry.setdefault("displayName", names[entry["email"]])
        entry.setdefault(
            "responseStatus", "accepted" if entry["email"] == organizer else "needsAction"
        )
        out.append(entry)
    return json.dumps(out)


def _current_time(row: Mapping[str, Any], which: str, cal_tz: str) -> dict[str, Any]:
    """An existing row's start or end as the API object (so patches can merge into it)."""
    value = row["start" if which == "start" else "end_"]
    if row["all_day"]:
        return {"date": value}
    tz = row["start_tz" if which == "start" else "end_tz"] or row["start_tz"] or cal_tz
    return {"dateTime": format_in_zone(parse_utc_text(value), tz), "timeZone": tz}


def _apply(
    store: Store, row: dict[str, Any], body: Mapping[str, Any], cal_tz: str, *, replace: bool
) -> None:
    """Set `row`'s columns from an API body (patch merges; update resets what is absent)."""
    previous_guests = row.get("attendees")
    if replace:
        row.update(_DEFAULTS)
    for key, column in _SIMPLE.items():
        if key in body:
            row[column] = body[key]
    if "start" in body or "end" in body:
        start = body.get("start") or _current_time(row, "start", cal_tz)
        end = body.get("end") or _current_time(row, "end", cal_tz)
        row.update(times_from_body(start, end, cal_tz))
    if "recurrence" in body:
        row["recurrence"] = json.dumps(body["recurrence"]) if body["recurrence"] else None
    if "attendees" in body:
        row["attendees"] = _attendees(store, body["attendees"], row["organizer"], previous_guests)
    if "reminders" in body:
        row["reminders"] = json.dumps(body["reminders"])
    if "extendedProperties" in body:
        row["extended"] = json.dumps(body["extendedProperties"], sort_keys=True)
    if "eventType" in body:
        row["event_type"] = body["eventType"]
    blocks = json.loads(row["type_properties"]) if row["type_properties"] else {}
    for field in PROPERTY_BLOCKS.values():
        if field in body:
            blocks[field] = body[field]
    if row["event_type"] == "birthday":
        blocks.setdefault("birthdayProperties", {"type": "birthday"})
    row["type_properties"] = json.dumps(blocks, sort_keys=True) if blocks else None
    options = json.loads(row["guest_options"]) if row["guest_options"] else {}
    for key in _GUEST_OPTIONS:
        if key in body:
            options[key] = body[key]
    row["guest_options"] = json.dumps(options, sort_keys=True) if options else None


def insert_event(
    store: Store,
    user: str,
    calendar_id: str,
    cal_tz: str,
    body: Mapping[str, Any],
    rules: WriteRules,
) -> dict[str, Any]:
    """Create an event from an API body (checked against `rules`); returns the stored row."""
    eid = body.get("id") or store.new_event_id()
    if body.get("id") and store.one(
        "SELECT 1 FROM events WHERE calendar_id = ? AND id = ?", (calendar_id, eid)
    ):
        raise ApiError(
            "CONFLICT",
            f"An event with id {eid!r} already exists on this calendar.",
            field="id",
            expected="an id not used on this calendar",
            got=eid,
            hint="Leave id out to get a fresh one, or change the existing event with events_patch.",
        )
    uid = body.get("iCalUID")  # events_import: the event's identity in other calendars
    if uid and store.one(
        "SELECT 1 FROM events WHERE calendar_id = ? AND ical_uid = ?", (calendar_id, uid)
    ):
        raise ApiError(
            "CONFLICT",
            f"An event with iCalUID {uid!r} is already on this calendar.",
            field="iCalUID",
            expected="an iCalUID not yet imported into this calendar",
            got=uid,
            hint="Find it with events_list(iCalUID=...) and change it with events_patch.",
        )
    row: dict[str, Any] = {
        "calendar_id": calendar_id,
        "id": eid,
        "ical_uid": uid or f"{eid}@google.com",
        "recurring_event_id": None,
        "original_start": None,
        "creator": user,
        "organizer": calendar_id,
        "sequence": 0,
        "all_day": 0,
        "start_tz": None,
        "end_tz": None,
        "event_type": "default",
        **_DEFAULTS,
    }
    _apply(store, row, body, cal_tz, replace=False)
    check_write(None, row, body, rules, cal_tz)
    _stamp(store, row)
    row["created"] = row["updated"]
    _save(store, row)
    return row


def write_event(
    store: Store,
    row: dict[str, Any],
    cal_tz: str,
    body: Mapping[str, Any],
    rules: WriteRules,
    *,
    replace: bool,
) -> dict[str, Any]:
    """Patch (`replace=False`) or update an event, checked against `rules`; for an instance,
    store it as an exception."""
    if row["recurring_event_id"] and "recurrence" in body and body["recurrence"]:
        raise ApiError(
            "FORBIDDEN_OPERATION",
            f"{row['id']} is one occurrence of a recurring event; it cannot have its own "
            "recurrence.",
            field="recurrence",
            expected="no recurrence on an instance",
            got=body["recurrence"],
            hint=f"Change the series through the master event {row['recurring_event_id']!r}.",
        )
    updated = dict(row)
    _apply(store, updated, body, cal_tz, replace=replace)
    if replace and row["recurring_event_id"]:
        updated["recurrence"] = None
    check_write(row, updated, body, rules, cal_tz)
    updated["sequence"] = row["sequence"] + 1
    _stamp(store, updated)
    _save(store, updated)
    return updated


def delete_event(store: Store, row: dict[str, Any]) -> None:
    """Cancel an event, a whole series (its master) or one instance (as an exception)."""
    if row["status"] == "cancelled":
        raise ApiError(
            "NOT_FOUND",
            f"Event {row['id']!r} was already deleted.",
            field="eventId",
            expected="an event that is not cancelled",
            got=row["id"],
            hint="Nothing to do: it is already cancelled (events_list with showDeleted=true "
            "shows deleted events).",
            google_message="Resource has been deleted",
            google_reason="deleted",
            google_http=410,
        )
    gone = dict(row, status="cancelled", sequence=row["sequence"] + 1)
    _stamp(store, gone)
    _save(store, gone)


def move_event(store: Store, row: dict[str, Any], destination: str) -> dict[str, Any]:
    """Move an event (with its exceptions, for a series) to another calendar."""
    if row["recurring_event_id"]:
        raise ApiError(
            "FORBIDDEN_OPERATION",
            f"{row['id']} is one occurrence of a recurring event; single instances cannot move "
            "to another calendar.",
            field="eventId",
            expected="a single event or a series' master id",
            got=row["id"],
            hint=f"Move the whole series with eventId={row['recurring_event_id']!r}.",
        )
    if destination == row["calendar_id"]:
        raise ApiError(
            "INVALID_VALUE",
            "destination is the calendar the event is already on.",
            field="destination",
            expected="a different calendar id",
            got=destination,
            hint="Pick the target calendar's id from calendarList_list.",
        )
    if store.one("SELECT 1 FROM events WHERE calendar_id = ? AND id = ?", (destination, row["id"])):
        raise ApiError(
            "CONFLICT",
            f"The destination calendar already has an event with id {row['id']!r}.",
            field="destination",
            expected="a calendar without this event id",
            got=destination,
            hint="Delete or rename the copy on the destination first.",
        )
    store.run(
        "UPDATE events SET calendar_id = ?, organizer = ? "
        "WHERE calendar_id = ? AND (id = ? OR recurring_event_id = ?)",
        (destination, destination, row["calendar_id"], row["id"], row["id"]),
    )
    moved = dict(row, calendar_id=destination, organizer=destination, sequence=row["sequence"] + 1)
    _stamp(store, moved)
    _save(store, moved)
    return moved
