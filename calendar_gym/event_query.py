"""Reading events: window filtering, recurrence expansion with exceptions, lookup by id.

Rows come back as plain dicts (stored rows, or virtual instance rows derived from a master), so
rendering and writing treat stored and expanded occurrences alike.

Example:
    >>> from calendar_gym.store import Store
    >>> from calendar_gym.seed_world import EVENT_IDS
    >>> store = Store.create(now="2026-03-04T14:00:00Z")
    >>> row = find_event(store, "alice@acme.test", "alice@acme.test",
    ...                  EVENT_IDS["one_on_one"] + "_20260309T140000Z", "America/New_York")
    >>> row["start"], row["recurring_event_id"] == EVENT_IDS["one_on_one"]
    ('2026-03-09T14:00:00Z', True)
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any

from calendar_gym.errors import ApiError
from calendar_gym.eventdata import event_bounds, instance_row, original_start_value
from calendar_gym.recurrence import instance_suffix, occurrence_starts, split_instance_id
from calendar_gym.store import Store
from calendar_gym.timeutil import parse_utc_text, zone

__all__ = ["Window", "event_not_found", "expand", "find_event", "rows_in_window", "series_starts"]

_ID_RE = re.compile(r"^[a-v0-9_]+[TZ0-9]*$")


class Window:
    """A half-open time window; either bound may be open."""

    def __init__(self, lo: datetime | None = None, hi: datetime | None = None) -> None:
        self.lo, self.hi = lo, hi

    def overlaps(self, start: datetime, end: datetime) -> bool:
        """Whether [start, end) meets the window (Google: end > timeMin and start < timeMax)."""
        if self.lo is not None and end <= self.lo:
            return False
        return not (self.hi is not None and start >= self.hi)


def series_starts(master: dict[str, Any], cal_tz: str) -> tuple[datetime | date, ...]:
    """Every original start of a recurring master (timed: UTC datetimes; all-day: dates)."""
    lines = tuple(json.loads(master["recurrence"]))
    if master["all_day"]:
        return occurrence_starts(lines, master["start"], cal_tz, True)
    tz = master["start_tz"] or cal_tz
    local = parse_utc_text(master["start"]).astimezone(zone(tz)).replace(tzinfo=None)
    return occurrence_starts(lines, local.isoformat(), tz, False)


def _candidates(
    starts: tuple[datetime | date, ...], master: dict[str, Any], window: Window, cal_tz: str
) -> Iterable[datetime | date]:
    if not starts:
        return ()
    lo_i, hi_i = 0, len(starts)
    if master["all_day"]:
        length = date.fromisoformat(master["end_"]) - date.fromisoformat(master["start"])
        if window.lo is not None:
            lo_day = window.lo.astimezone(zone(cal_tz)).date() - length - timedelta(days=1)
            lo_i = bisect.bisect_left(starts, lo_day)  # type: ignore[arg-type]
        if window.hi is not None:
            hi_day = window.hi.astimezone(zone(cal_tz)).date() + timedelta(days=1)
            hi_i = bisect.bisect_right(starts, hi_day)  # type: ignore[arg-type]
    else:
        length = parse_utc_text(master["end_"]) - parse_utc_text(master["start"])
        if window.lo is not None:
            lo_i = bisect.bisect_left(starts, window.lo - length)  # type: ignore[arg-type]
        if window.hi is not None:
            hi_i = bisect.bisect_left(starts, window.hi)  # type: ignore[arg-type]
    return starts[lo_i:hi_i]


def expand(
    store: Store, master: dict[str, Any], cal_tz: str, window: Window, show_deleted: bool
) -> list[dict[str, Any]]:
    """The occurrences of `master` meeting `window`, exceptions applied."""
    exceptions = {
        r["original_start"]: dict(r)
        for r in store.all(
            "SELECT * FROM events WHERE calendar_id = ? AND recurring_event_id = ?",
            (master["calendar_id"], master["id"]),
        )
    }
    out: list[dict[str, Any]] = []
    cancelled_master = master["status"] == "cancelled"
    for original in _candidates(series_starts(master, cal_tz), master, window, cal_tz):
        key = original_start_value(original)
        if key in exceptions:
            continue
        row = instance_row(master, original, instance_suffix(original))
        if window.overlaps(*event_bounds(row, cal_tz)):
            out.append(row)
    for row in exceptions.values():
        if window.overlaps(*event_bounds(row, cal_tz)):
            if cancelled_master:
                row["status"] = "cancelled"
            out.append(row)
    return [r for r in out if show_deleted or r["status"] != "cancelled"]


def rows_in_window(
    store: Store,
    calendar_id: str,
    cal_tz: str,
    window: Window,
    *,
    single_events: bool,
    show_deleted: bool,
) -> list[dict[str, Any]]:
    """Every event row of a calendar meeting `window`, expanded if `single_events`."""
    out: list[dict[str, Any]] = []
    sql, params = "SELECT * FROM events WHERE calendar_id = ?", [calendar_id]
    if window.lo is not None or window.hi is not None:
        # A coarse prefilter on the stored text (dates and UTC instants both sort as text); the
        # exact test below uses real instants. Series and their exceptions are always expanded.
        sql += " AND (recurrence IS NOT NULL OR recurring_event_id IS NOT NULL OR (1"
        if window.lo is not None:
            sql += " AND end_ >= ?"
            params.append((window.lo - timedelta(days=2)).strftime("%Y-%m-%d"))
        if window.hi is not None:
            sql += " AND start <= ?"
            params.append((window.hi + timedelta(days=2)).strftime("%Y-%m-%d"))
        sql += "))"
    for stored in store.all(sql, params):
        row = dict(stored)
        if row["recurrence"]:
            if single_events:
                out += expand(store, row, cal_tz, window, show_deleted)
            elif show_deleted or row["status"] != "cancelled":
                unbounded = window.lo is None and window.hi is None
                if unbounded or expand(store, row, cal_tz, window, show_deleted):
                    out.append(row)
            continue
        if row["recurring_event_id"] and single_events:
            continue  # already placed by its master's expansion
        if not show_deleted and row["status"] == "cancelled":
            continue
        if window.overlaps(*event_bounds(row, cal_tz)):
            out.append(row)
    return out


def event_not_found(store: Store, user: str, calendar_id: str, raw: str) -> ApiError:
    """`NOT_FOUND` for an event id, pointing at its calendar or at matching titles if it can."""
    from calendar_gym.acl import RANK, effective_role

    hint = f"Call events_list(calendarId={calendar_id!r}) to find event ids."
    example = None
    elsewhere = store.all(
        "SELECT c.id, c.summary FROM events e JOIN calendars c ON c.id = e.calendar_id "
        "WHERE e.id = ? AND c.deleted = 0 AND c.id != ? ORDER BY c.id",
        (raw, calendar_id),
    )
    readable = [
        c for c in elsewhere if RANK[effective_role(store, user, c["id"])] >= RANK["reader"]
    ]
    if readable:
        hint = (
            f"Event {raw!r} is on calendar {readable[0]['summary']!r} ({readable[0]['id']}), "
            f"not on {calendar_id}; pass calendarId={readable[0]['id']!r}."
        )
        example = {"calendarId": readable[0]["id"], "eventId": raw}
    elif not _ID_RE.match(raw):
        owner = effective_role(store, user, calendar_id) == "owner"
        hidden = "" if owner else "AND visibility NOT IN ('private', 'confidential') "
        titles = []
        if len(raw) >= 3:
            titles = store.all(
                "SELECT id, summary FROM events WHERE calendar_id = ? "
                "AND recurring_event_id IS NULL AND status != 'cancelled' "
                f"AND lower(summary) LIKE ? {hidden}ORDER BY id LIMIT 5",
                (calendar_id, f"%{raw.lower()}%"),
            )
        hint = "eventId takes an event id, not a title; use events_list(q=...) to find it."
        if titles:
            shown = "; ".join(f"{t['summary']!r} = {t['id']}" for t in titles)
            hint = f"eventId takes an id, not a title. Events on this calendar that match: {shown}."
            example = {"eventId": titles[0]["id"]}
    return ApiError(
        "NOT_FOUND",
        f"Event {raw!r} was not found on calendar {calendar_id}.",
        field="eventId",
        expected="an event id from events_list on this calendar",
        got=raw,
        hint=hint,
        example=example,
    )


def find_event(
    store: Store, user: str, calendar_id: str, event_id: str, cal_tz: str
) -> dict[str, Any]:
    """The stored row or virtual instance `event_id` of a calendar; `NOT_FOUND` otherwise.

    Cancelled events are returned too (with `status: cancelled`), as Google does.
    """
    stored = store.one(
        "SELECT * FROM events WHERE calendar_id = ? AND id = ?", (calendar_id, event_id)
    )
    if stored is not None:
        row = dict(stored)
        if row["recurring_event_id"]:
            master = store.one(
                "SELECT status FROM events WHERE calendar_id = ? AND id = ?",
                (calendar_id, row["recurring_event_id"]),
            )
            if master is not None and master["status"] == "cancelled":
                row["status"] = "cancelled"
        return row
    parts = split_instance_id(event_id)
    if parts is not None:
        master_id, original = parts
        master = store.one(
            "SELECT * FROM events WHERE calendar_id = ? AND id = ? AND recurrence IS NOT NULL",
            (calendar_id, master_id),
        )
        if master is not None and bool(master["all_day"]) != isinstance(original, datetime):
            master_row = dict(master)
            starts = series_starts(master_row, cal_tz)
            i = bisect.bisect_left(starts, original)  # type: ignore[arg-type]
            if i < len(starts) and starts[i] == original:
                return instance_row(master_row, original, instance_suffix(original))
    raise event_not_found(store, user, calendar_id, event_id)
