"""Invitee copies: an event shows on the primary calendar of each guest in its organizer's domain.

Google Calendar puts an invitation on the invitee's own calendar (for guests in the organizer's
Workspace domain, with "add invitations to my calendar" on, its default): the same event — same
id, same `iCalUID`, the organizer's fields — listed by `events.list`, read by `events.get` and
counted by `freebusy.query` on the invitee's calendar, where `attendees[].self` marks the
invitee. A copy the invitee has declined is still listed but is not busy time.

The copies are views, not rows: an event is stored once, on its organizer's calendar, and a
read of a primary calendar adds the events of other calendars that invite its owner
(`invitations`), so the organizer's changes show on every copy at once, and the grader's
snapshot (stored rows) is the same with or without them. Writing through a copy is refused with
Google's `forbiddenForNonOrganizer` (the simulation keeps no per-attendee fields; the
organizer's calendar is named in the hint).

Applies from the suite version in `calendar_gym.events.rules.VERSION_RULES` (`invitee_copies`).

Example:
    >>> from calendar_gym.world.store import Store
    >>> store = Store.create(now="2026-03-04T14:00:00Z")
    >>> rows = invitations(store, "bob@acme.test")
    >>> all(invites(r, "bob@acme.test") for r, _ in rows), "Onboarding session" in {
    ...     r["summary"] for r, _ in rows}
    (True, True)
"""

from __future__ import annotations

import json
from typing import Any

from calendar_gym.world.errors import ApiError
from calendar_gym.world.store import Store

__all__ = ["declined", "invitations", "invites", "owner_of_primary", "refuse_write"]


def _domain(email: str) -> str:
    return email.rpartition("@")[2].lower()


def _guests(row: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        found = json.loads(row.get("attendees") or "[]")
    except ValueError:
        return []
    return [g for g in found if isinstance(g, dict)]


def owner_of_primary(store: Store, calendar_id: str) -> str | None:
    """The user whose primary calendar `calendar_id` is (None for any other calendar)."""
    found = store.one(
        "SELECT u.email FROM users u JOIN calendars c ON c.id = u.email "
        "WHERE c.id = ? AND c.is_primary = 1 AND c.deleted = 0",
        (calendar_id,),
    )
    return found["email"] if found else None


def invites(row: dict[str, Any], email: str) -> bool:
    """Whether `row` puts a copy on `email`'s calendar: a guest, not the organizer, in the
    organizer's domain, on an event stored on another calendar."""
    email = email.lower()
    organizer = str(row.get("organizer") or "").lower()
    if row.get("calendar_id") == email or organizer == email:
        return False
    if _domain(organizer) != _domain(email):
        return False
    return any(str(g.get("email", "")).lower() == email for g in _guests(row))


def declined(row: dict[str, Any], email: str) -> bool:
    """Whether `email` declined `row` (a declined copy is listed but not busy)."""
    email = email.lower()
    return any(
        str(g.get("email", "")).lower() == email and g.get("responseStatus") == "declined"
        for g in _guests(row)
    )


def invitations(
    store: Store, email: str, *, event_ids: tuple[str, ...] = ()
) -> list[tuple[dict[str, Any], str]]:
    """`(row, organizer calendar's zone)` of every stored event of another live calendar that
    invites `email` (series masters, single events and a series' changed occurrences), only
    those ids when `event_ids` is given; ids the invitee's own calendar holds are left out."""
    sql = (
        "SELECT e.*, c.time_zone AS organizer_zone FROM events e "
        "JOIN calendars c ON c.id = e.calendar_id "
        "WHERE c.deleted = 0 AND e.calendar_id != ? AND lower(e.attendees) LIKE ? "
        "AND e.id NOT IN (SELECT id FROM events WHERE calendar_id = ?)"
    )
    params: list[Any] = [email, f"%{email.lower()}%", email]
    if event_ids:
        sql += f" AND e.id IN ({', '.join('?' * len(event_ids))})"
        params += list(event_ids)
    out = []
    for stored in store.all(sql + " ORDER BY e.calendar_id, e.id", params):
        row = dict(stored)
        zone = row.pop("organizer_zone")
        if invites(row, email):
            out.append((row, zone))
    return out


def refuse_write(store: Store, calendar_id: str, event_id: str) -> None:
    """Raise `forbiddenForNonOrganizer` when `event_id` is an invitation's copy on
    `calendar_id` (a write must go to the organizer's calendar); otherwise return."""
    email = owner_of_primary(store, calendar_id)
    if email is None:
        return
    master = event_id.split("_", 1)[0]
    found = invitations(store, email, event_ids=(event_id, master))
    if not found:
        return
    row = found[0][0]
    raise ApiError(
        "PERMISSION_DENIED",
        f"Event {event_id!r} is an invitation on {calendar_id}; only its organizer "
        f"({row['organizer']}) can change it.",
        field="eventId",
        expected="an event stored on this calendar",
        got=event_id,
        hint=f"This is {email}'s copy of an event organized on calendar {row['calendar_id']}; "
        "change it there (with access to that calendar), not through a guest's calendar.",
        google_message="The operation can only be performed by the organizer of the event.",
        google_reason="forbiddenForNonOrganizer",
    )
