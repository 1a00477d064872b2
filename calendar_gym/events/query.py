"""Reading events: window filtering, recurrence expansion with exceptions, lookup by id.

Rows come back as plain dicts (stored rows, or virtual instance rows derived from a master), so
rendering and writing treat stored and expanded occurrences alike.

Example:
    >>> from calendar_gym.world.store import Store
    >>> from calendar_gym.world.seed import EVENT_IDS
    >>> store = Store.create(now="2026-03-04T14:00:00Z")
    >>> row = find_event(store, "alice@acme.test", "alice@acme.test",
    ...                  EVENT_IDS["one_on_one"] + "_20260309T140000Z", "America/New_York")
    >>> row["start"], row["recurring_event_id"] == EVENT_IDS["one_on_one"]
    ('2026-03-09T14:00:00Z', True)
"""

from __future__ import annotations

import bisect
import contextlib
import contextvars
import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from calendar_gym.events.invites import invitations
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import event_bounds, instance_row, original_start_value
from calendar_gym.world.ids import listing_key
from calendar_gym.world.recurrence import (
    HORIZON,
    MAX_INSTANCES,
    instance_suffix,
    occurrence_starts,
    split_instance_id,
)
from calendar_gym.world.store import Store
from calendar_gym.world.timeutil import parse_utc_text, zone

__all__ = [
    "CALL_BUDGET",
    "Window",
    "call_budget",
    "event_not_found",
    "expand",
    "find_event",
    "rows_in_window",
    "series_starts",
]

CALL_BUDGET = 3_000
"""Occurrences one call may expand across every series, by `estimate` (a five-year weekly
series is 261, a daily one 1,827).
Google caps a page at 2,500 events; a call that needs more than this many occurrences is a
window too wide for its series, and answering it would hold the server (30 FREQ=SECONDLY series
over five years are 150,000 rows). It gets `RESULT_TOO_LARGE` instead."""

_BUDGET: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "calendar_call_budget", default=None
)


@contextlib.contextmanager
def call_budget(limit: int = CALL_BUDGET) -> Iterator[None]:
    """Give the tool call inside a fresh occurrence budget (`CalendarEnv` wraps every call)."""
    token = _BUDGET.set([limit])
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _spend(n: int, tool_hint: str = "events_list") -> None:
    left = _BUDGET.get()
    if left is None:
        return
    left[0] -= n
    if left[0] < 0:
        raise ApiError(
            "RESULT_TOO_LARGE",
            f"This call would expand more than {CALL_BUDGET} occurrences of recurring events.",
            field="timeMin",
            expected=f"a time window holding at most {CALL_BUDGET} occurrences",
            got="a wider window",
            hint=(
                "Narrow timeMin/timeMax (a shorter window), page with maxResults, or list the "
                "series without singleEvents (one row per series)."
            ),
            example={"timeMin": "2026-03-09T00:00:00Z", "timeMax": "2026-03-16T00:00:00Z"},
        )


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


_PERIOD_S = {"SECONDLY": 1, "MINUTELY": 60, "HOURLY": 3600, "DAILY": 86_400,
             "WEEKLY": 604_800, "MONTHLY": 2_419_200, "YEARLY": 31_536_000}  # fmt: skip


def estimate(master: dict[str, Any], window: Window) -> int:
    """An upper bound of the occurrences of `master` in `window`, from its rules alone (no
    expansion: a FREQ=SECONDLY series costs the same to estimate as a weekly one)."""
    if master["all_day"]:
        first = datetime.combine(date.fromisoformat(master["start"]), time(), UTC)
    else:
        first = parse_utc_text(master["start"])
    lo = max(first, window.lo) if window.lo is not None else first
    hi = min(first + HORIZON, window.hi) if window.hi is not None else first + HORIZON
    span = max(0.0, (hi - lo).total_seconds())
    total = 0
    for line in json.loads(master["recurrence"]):
        upper = str(line).upper()
        if upper.startswith("RDATE"):
            total += upper.count(",") + 1
        if not upper.startswith("RRULE"):
            continue
        parts = dict(p.split("=", 1) for p in upper.split(":", 1)[-1].split(";") if "=" in p)
        line_span = span
        until = parts.get("UNTIL", "")[:8]
        if until.isdigit() and len(until) == 8:  # the series ends: count up to that day only
            with contextlib.suppress(ValueError):
                end = datetime.strptime(until, "%Y%m%d").replace(tzinfo=UTC) + timedelta(days=1)
                line_span = max(0.0, (min(hi, end) - lo).total_seconds())
        interval = int(parts.get("INTERVAL", "1")) if parts.get("INTERVAL", "1").isdigit() else 1
        period = _PERIOD_S.get(parts.get("FREQ", ""), 86_400) * max(1, interval)
        spread = 1
        for key, value in parts.items():
            if key.startswith("BY"):
                spread *= value.count(",") + 1  # an upper bound: BY parts may also filter
        n = line_span / period * spread + spread
        count = parts.get("COUNT", "")
        if count.isdigit():
            n = min(n, int(count))
        total += int(min(n, MAX_INSTANCES))
    return total


def _candidates(
    starts: tuple[datetime | date, ...], master: dict[str, Any], window: Window, cal_tz: str
) -> Sequence[datetime | date]:
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
    store: Store,
    master: dict[str, Any],
    cal_tz: str,
    window: Window,
    show_deleted: bool,
    *,
    charge: bool = True,
) -> list[dict[str, Any]]:
    """The occurrences of `master` meeting `window`, exceptions applied (charged to the call's
    budget unless the caller already did, `charge=False`)."""
    exceptions = {
        r["original_start"]: dict(r)
        for r in store.all(
            "SELECT * FROM events WHERE calendar_id = ? AND recurring_event_id = ?",
            (master["calendar_id"], master["id"]),
        )
    }
    out: list[dict[str, Any]] = []
    cancelled_master = master["status"] == "cancelled"
    if charge:
        _spend(estimate(master, window))  # before expanding: refusing must be cheap
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
    invitee: str | None = None,
) -> list[dict[str, Any]]:
    """Every event row of a calendar meeting `window`, expanded if `single_events`; with
    `invitee` (the owner of a primary calendar) also the invitations' copies
    (`calendar_gym.events.invites`), each expanded in its organizer calendar's zone."""
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
    groups = [([dict(r) for r in store.all(sql, params)], cal_tz)]
    if invitee is not None:
        by_zone: dict[str, list[dict[str, Any]]] = {}
        for row, organizer_zone in invitations(store, invitee):
            by_zone.setdefault(organizer_zone, []).append(row)
        groups += [(rows, z) for z, rows in sorted(by_zone.items())]
    # Charge every series before expanding any, so an over-budget call is refused at once.
    expands = single_events or window.lo is not None or window.hi is not None
    # a deleted series shows nothing unless deleted events are asked for: it costs nothing
    groups = [
        ([r for r in rows if show_deleted or not (r["recurrence"] and r["status"] == "cancelled")],
         z)
        for rows, z in groups
    ]  # fmt: skip
    _spend(sum(estimate(r, window) for rows, _ in groups for r in rows
               if r["recurrence"] and expands))  # fmt: skip
    out: list[dict[str, Any]] = []
    for rows, zone_name in groups:
        out += _collect(store, rows, zone_name, window, single_events, show_deleted)
    return out


def _collect(
    store: Store,
    found: list[dict[str, Any]],
    cal_tz: str,
    window: Window,
    single_events: bool,
    show_deleted: bool,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for row in found:
        if row["recurrence"]:
            if single_events:
                out += expand(store, row, cal_tz, window, show_deleted, charge=False)
            elif show_deleted or row["status"] != "cancelled":
                unbounded = window.lo is None and window.hi is None
                if unbounded or expand(store, row, cal_tz, window, show_deleted, charge=False):
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
    from calendar_gym.world.acl import RANK, effective_role

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
                f"AND lower(summary) LIKE ? {hidden}ORDER BY id",
                (calendar_id, f"%{raw.lower()}%"),
            )
            if store.order_salt:
                titles.sort(key=lambda t: listing_key(store.order_salt, t["id"]))
            titles = titles[:5]
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
    store: Store,
    user: str,
    calendar_id: str,
    event_id: str,
    cal_tz: str,
    *,
    invitee: str | None = None,
) -> dict[str, Any]:
    """The stored row or virtual instance `event_id` of a calendar; `NOT_FOUND` otherwise.
    With `invitee` (the owner of a primary calendar), an invitation's copy is found too.

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
    if invitee is not None:
        master_id = parts[0] if parts is not None else event_id
        for row, organizer_zone in invitations(store, invitee, event_ids=(event_id, master_id)):
            with contextlib.suppress(ApiError):
                return find_event(store, user, row["calendar_id"], event_id, organizer_zone)
    raise event_not_found(store, user, calendar_id, event_id)
