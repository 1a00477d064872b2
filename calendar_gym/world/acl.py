"""Access control: effective roles, per-operation minimum roles, NOT_FOUND vs PERMISSION_DENIED.

A user's effective role on a calendar is the highest role of every ACL rule that matches them:
their own `user:` rule, a `group:` rule of a group they belong to, their `domain:` and the
`default` rule. Roles are ordered none < freeBusyReader < reader < writer < owner.

| operation                              | needs           |
| -------------------------------------- | --------------- |
| free/busy, seeing a calendar at all    | freeBusyReader  |
| reading events (private ones as busy)  | reader          |
| writing events (moving: on both sides) | writer          |
| ACL and calendar metadata changes      | owner           |

No role at all → `NOT_FOUND` (the calendar's existence is not revealed); some role but too
low → `PERMISSION_DENIED` with `required_role`, `current_role` and a remediation.

Example:
    >>> from calendar_gym.world.store import Store
    >>> from calendar_gym.world.seed import CALENDAR_IDS
    >>> store = Store.create(now="2026-03-04T14:00:00Z")
    >>> effective_role(store, "bob@acme.test", CALENDAR_IDS["marketing"])
    'reader'
"""

from __future__ import annotations

import difflib
import sqlite3
from dataclasses import dataclass

from calendar_gym.world.errors import ApiError
from calendar_gym.world.ids import listing_key
from calendar_gym.world.store import Store

__all__ = [
    "RANK",
    "ROLES",
    "Access",
    "calendar_not_found",
    "effective_role",
    "require",
    "resolve_calendar_id",
]

ROLES = ("none", "freeBusyReader", "reader", "writerWithoutPrivateAccess", "writer", "owner")
RANK = {role: i for i, role in enumerate(ROLES)}
WRITER_NO_PRIVATE = "writerWithoutPrivateAccess"
"""Writes events like a writer but sees private events as busy and cannot read the ACL."""


@dataclass(frozen=True, slots=True)
class Access:
    """A calendar the user may use: its row and their effective role."""

    calendar: sqlite3.Row
    role: str

    @property
    def id(self) -> str:
        """The calendar's id."""
        return str(self.calendar["id"])

    @property
    def time_zone(self) -> str:
        """The calendar's IANA zone."""
        return str(self.calendar["time_zone"])

    @property
    def is_owner(self) -> bool:
        """Whether the user has the owner role."""
        return self.role == "owner"

    @property
    def sees_private(self) -> bool:
        """Whether private events show their details: owners and writers (Google's AclRule.role:
        with writer access "private events will appear ... and event details will be visible")."""
        return RANK[self.role] >= RANK["writer"]


def resolve_calendar_id(user: str, raw: str) -> str:
    """`primary` → the user's own calendar id (their email); other ids unchanged."""
    return user if raw.strip().lower() == "primary" else raw.strip()


def effective_role(store: Store, user: str, calendar_id: str) -> str:
    """The highest role any ACL rule of `calendar_id` grants `user` (`none` if none does)."""
    domain = user.rpartition("@")[2]
    groups = {
        r[0]
        for r in store.all("SELECT group_email FROM group_members WHERE member_email = ?", (user,))
    }
    best = 0
    for kind, value, role in store.all(
        "SELECT scope_type, scope_value, role FROM acl WHERE calendar_id = ?", (calendar_id,)
    ):
        if (
            kind == "default"
            or (kind == "user" and value.lower() == user)
            or (kind == "group" and value.lower() in groups)
            or (kind == "domain" and value.lower() == domain)
        ):
            best = max(best, RANK[role])
    return ROLES[best]


def _lookup(store: Store, calendar_id: str) -> sqlite3.Row | None:
    row = store.one("SELECT * FROM calendars WHERE id = ? AND deleted = 0", (calendar_id,))
    if row is None and "@" in calendar_id:
        row = store.one(
            "SELECT * FROM calendars WHERE lower(id) = lower(?) AND deleted = 0", (calendar_id,)
        )
    return row


def calendar_not_found(store: Store, user: str, raw: str, field: str = "calendarId") -> ApiError:
    """`NOT_FOUND` for a calendar, with a hint that maps a name to ids when it looks like one."""
    hint = (
        "Call calendarList_list to see the calendars you can use (ids look like "
        "c_...@group.calendar.google.com, or a person's email for their primary calendar); "
        "use 'primary' for your own."
    )
    example = None
    if "@" not in raw and raw.lower() != "primary":
        entries = store.all(
            "SELECT c.id, c.summary, l.summary_override FROM calendar_list l "
            "JOIN calendars c ON c.id = l.calendar_id WHERE l.user_email = ? AND c.deleted = 0 "
            "ORDER BY c.id",
            (user,),
        )
        wanted = raw.lower()
        matches = [
            e
            for e in entries
            if any(
                n
                and (
                    wanted in n.lower()
                    or difflib.SequenceMatcher(None, wanted, n.lower()).ratio() > 0.75
                )
                for n in (e["summary"], e["summary_override"])
            )
        ]
        if store.order_salt:
            matches.sort(key=lambda e: listing_key(store.order_salt, e["id"]))
        if matches:
            shown = "; ".join(
                f"{e['summary_override'] or e['summary']!r} = {e['id']}" for e in matches[:5]
            )
            hint = (
                f"calendarId takes an id, not a name. Calendars in your list that match: {shown}."
            )
            example = {field: matches[0]["id"]}
    return ApiError(
        "NOT_FOUND",
        f"Calendar {raw!r} was not found, or you have no access to it.",
        field=field,
        expected="a calendar id from calendarList_list, or 'primary'",
        got=raw,
        hint=hint,
        example=example,
    )


def _remediation(required: str, current: str, owner: str, action: str) -> str:
    """Who owns the calendar, which role is needed and how to get it: facts, never what a task
    expects the agent to do about it."""
    if required == "reader" and current == "freeBusyReader":
        return (
            f"Your role shows only free/busy times; freebusy_query answers those. To read the "
            f"events you need reader: the owner ({owner}) can grant it with acl_insert."
        )
    if required == "writer":
        return (
            f"The owner ({owner}) can grant you writer with acl_insert. Calendars where your "
            "accessRole is already writer or owner: calendarList_list(minAccessRole='writer')."
        )
    if required == "owner":
        return (
            f"Only an owner can {action}. The owner ({owner}) can do it, or grant you the owner "
            "role with acl_insert."
        )
    return f"The owner ({owner}) can grant you {required} access with acl_insert."


def require(
    store: Store,
    user: str,
    raw: str,
    needed: str,
    *,
    action: str,
    field: str = "calendarId",
    strict: bool = False,
) -> Access:
    """The calendar `raw` if `user` has at least role `needed` on it.

    Raises `NOT_FOUND` when it does not exist or the user has no role, `PERMISSION_DENIED`
    (with the role detail and a remediation) when the role is too low.
    """
    row = _lookup(store, resolve_calendar_id(user, raw))
    role = effective_role(store, user, row["id"]) if row is not None else "none"
    if row is None or role == "none":
        raise calendar_not_found(store, user, raw, field)
    # writerWithoutPrivateAccess writes events like a writer, but is not one where the writer
    # role gives more (`strict`: reading the ACL).
    writes = needed == "writer" and role == WRITER_NO_PRIVATE and not strict
    if RANK[role] < RANK[needed] and not writes:
        remediation = _remediation(needed, role, row["owner"], action)
        raise ApiError(
            "PERMISSION_DENIED",
            f"You have {role} access to calendar {row['summary']!r} ({row['id']}); "
            f"to {action} you need {needed} or higher.",
            field=field,
            expected=f"{needed} role or higher",
            got=role,
            hint=remediation,
            google_message=f"You need to have {needed} access to this calendar.",
            required_role=needed,
            current_role=role,
            remediation=remediation,
        )
    return Access(row, role)
