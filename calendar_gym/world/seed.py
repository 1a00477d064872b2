"""The versioned seed world: who exists, which calendars they have, and who may see what.

`WORLD_VERSION` names the world; anything that changes a row bumps it. The world has 8 users in
two domains (`acme.test`, `globex.test`), 2 groups, 25 calendars and ~150 events (`seed_events`),
with deliberate near-duplicates for the task suite:

- "Marketing" vs "Marketing (Archive)" (both Carol's);
- "Q2 Planning", which Alice's calendar list shows as "Roadmap" (a `summaryOverride`);
- two users named Alex: Alex Kim (acme.test) and Alex Rivera (globex.test);
- a "Team Sync" series on both Engineering and Marketing;
- a weekly recurring 1:1 between Alice and Bob (across the March 8 daylight-saving change).

Ids are stable per world version: `CALENDAR_IDS["marketing"]`, `EVENT_IDS["one_on_one"]`.
The same data format is accepted by the `seed_patch` reset option (see `loader`).

Example:
    >>> CALENDAR_IDS["marketing"].endswith("@group.calendar.google.com")
    True
    >>> MAIN_USER
    'alice@acme.test'
"""

from __future__ import annotations

from typing import Any

from calendar_gym.world.ids import WORLD_VERSION, calendar_id, event_id
from calendar_gym.world.seed_events import EVENT_IDS, seed_events

__all__ = [
    "CALENDAR_IDS",
    "DEFAULT_NOW",
    "EVENT_IDS",
    "MAIN_USER",
    "WORLD_VERSION",
    "calendar_id",
    "event_id",
    "world_data",
]

MAIN_USER = "alice@acme.test"
DEFAULT_NOW = "2026-03-04T09:00:00-05:00"  # a Wednesday, four days before US DST starts


USERS: list[dict[str, Any]] = [
    {
        "email": "alice@acme.test",
        "name": "Alice Chen",
        "time_zone": "America/New_York",
        "title": "Engineering Manager",
    },
    {
        "email": "bob@acme.test",
        "name": "Bob Martinez",
        "time_zone": "America/New_York",
        "title": "Software Engineer",
    },
    {
        "email": "carol@acme.test",
        "name": "Carol Okafor",
        "time_zone": "Europe/London",
        "title": "Marketing Lead",
    },
    {
        "email": "alex.kim@acme.test",
        "name": "Alex Kim",
        "time_zone": "America/Los_Angeles",
        "title": "Product Designer",
    },
    {
        "email": "dana@acme.test",
        "name": "Dana Whitfield",
        "time_zone": "America/Chicago",
        "title": "Finance Analyst",
    },
    {
        "email": "alex.rivera@globex.test",
        "name": "Alex Rivera",
        "time_zone": "Europe/Berlin",
        "title": "Partnerships Director",
    },
    {
        "email": "erin@globex.test",
        "name": "Erin Novak",
        "time_zone": "Europe/Berlin",
        "title": "Account Executive",
    },
    {
        "email": "frank@globex.test",
        "name": "Frank Liu",
        "time_zone": "Asia/Tokyo",
        "title": "Solutions Engineer",
    },
]

GROUPS: list[dict[str, Any]] = [
    {
        "email": "eng@acme.test",
        "name": "Engineering",
        "description": "Acme engineering team",
        "members": ["alice@acme.test", "bob@acme.test", "alex.kim@acme.test"],
    },
    {
        "email": "partners@globex.test",
        "name": "Globex Partner Team",
        "description": "Everyone working on the Acme partnership",
        "members": [
            "alex.rivera@globex.test",
            "erin@globex.test",
            "frank@globex.test",
            "alice@acme.test",
        ],
    },
]

_ACME = "domain:acme.test"
_GLOBEX = "domain:globex.test"

# key, owner, summary, time zone, description, ACL (beyond the owner), list subscribers
_SECONDARY: list[tuple[str, str, str, str, str, dict[str, str], list[str]]] = [
    (
        "marketing",
        "carol@acme.test",
        "Marketing",
        "Europe/London",
        "Campaigns, launches and the marketing team's meetings.",
        {_ACME: "reader", "user:alice@acme.test": "writer"},
        ["alice@acme.test"],
    ),
    (
        "marketing_archive",
        "carol@acme.test",
        "Marketing (Archive)",
        "Europe/London",
        "Past campaigns (read-only archive).",
        {_ACME: "reader"},
        ["alice@acme.test"],
    ),
    (
        "engineering",
        "alice@acme.test",
        "Engineering",
        "America/New_York",
        "Engineering team rituals and releases.",
        {"group:eng@acme.test": "writer", _ACME: "reader"},
        ["bob@acme.test", "alex.kim@acme.test"],
    ),
    (
        "product_launches",
        "alex.kim@acme.test",
        "Product Launches",
        "America/Los_Angeles",
        "Launch dates for every product line.",
        {_ACME: "reader", "user:alice@acme.test": "writer"},
        ["alice@acme.test", "bob@acme.test"],
    ),
    (
        "oncall",
        "bob@acme.test",
        "On-call Rotation",
        "America/New_York",
        "Who carries the pager each week.",
        {"group:eng@acme.test": "reader"},
        ["alice@acme.test"],
    ),
    (
        "holidays",
        "dana@acme.test",
        "Company Holidays",
        "America/New_York",
        "Office closures.",
        {"default": "reader"},
        ["alice@acme.test", "bob@acme.test", "carol@acme.test", "alex.kim@acme.test"],
    ),
    (
        "boardroom",
        "alice@acme.test",
        "Boardroom (5F)",
        "America/New_York",
        "Room calendar: 12 seats, video conferencing.",
        {_ACME: "writer"},
        [],
    ),
    (
        "focus_room",
        "alice@acme.test",
        "Focus Room (3F)",
        "America/New_York",
        "Room calendar: 4 seats.",
        {_ACME: "freeBusyReader"},
        [],
    ),
    (
        "personal",
        "alice@acme.test",
        "Alice Personal",
        "America/New_York",
        "Personal appointments.",
        {},
        [],
    ),
    (
        "hiring",
        "alice@acme.test",
        "Hiring",
        "America/New_York",
        "Interview loops.",
        {"user:carol@acme.test": "reader", "user:bob@acme.test": "writer"},
        ["bob@acme.test", "carol@acme.test"],
    ),
    (
        "q2_planning",
        "alice@acme.test",
        "Q2 Planning",
        "America/New_York",
        "Roadmap and OKR planning for Q2.",
        {_ACME: "reader"},
        ["bob@acme.test"],
    ),
    (
        "finance",
        "dana@acme.test",
        "Finance Deadlines",
        "America/Chicago",
        "Close, expenses and budget deadlines.",
        {"user:alice@acme.test": "reader"},
        ["alice@acme.test"],
    ),
    (
        "book_club",
        "carol@acme.test",
        "Book Club",
        "Europe/London",
        "Monthly book club.",
        {"default": "freeBusyReader", "user:bob@acme.test": "writer"},
        ["bob@acme.test"],
    ),
    (
        "design_reviews",
        "alex.kim@acme.test",
        "Design Reviews",
        "America/Los_Angeles",
        "Weekly design critique.",
        {_ACME: "reader", "group:eng@acme.test": "writer"},
        ["alice@acme.test"],
    ),
    (
        "globex_partnership",
        "alex.rivera@globex.test",
        "Acme & Globex Partnership",
        "Europe/Berlin",
        "Joint work between Acme and Globex.",
        {"user:alice@acme.test": "writer", "group:partners@globex.test": "reader"},
        ["alice@acme.test", "erin@globex.test", "frank@globex.test"],
    ),
    (
        "globex_sales",
        "erin@globex.test",
        "Globex Sales",
        "Europe/Berlin",
        "Pipeline reviews.",
        {_GLOBEX: "reader"},
        ["frank@globex.test", "alex.rivera@globex.test"],
    ),
    (
        "globex_offsite",
        "frank@globex.test",
        "Globex Offsite 2026",
        "Asia/Tokyo",
        "Tokyo offsite planning.",
        {"user:alice@acme.test": "reader", _GLOBEX: "writer"},
        [],
    ),
]

# Extra ACL rules on primary calendars (every primary also shares free/busy with its domain).
_PRIMARY_SHARES: dict[str, dict[str, str]] = {
    "alice@acme.test": {"user:bob@acme.test": "reader"},
    "bob@acme.test": {"user:alice@acme.test": "reader"},
    "carol@acme.test": {"user:alice@acme.test": "reader"},
    "erin@globex.test": {"user:alice@acme.test": "freeBusyReader"},
    "alex.rivera@globex.test": {"user:alice@acme.test": "freeBusyReader"},
}
# Other users' primaries that appear in someone's calendar list.
_PRIMARY_SUBSCRIPTIONS: dict[str, list[str]] = {
    "alice@acme.test": ["bob@acme.test", "carol@acme.test"],
    "bob@acme.test": ["alice@acme.test"],
}
_OVERRIDES: dict[tuple[str, str], dict[str, Any]] = {
    ("alice@acme.test", "q2_planning"): {"summary_override": "Roadmap", "color_id": "9"},
    ("alice@acme.test", "marketing_archive"): {"hidden": True, "color_id": "8"},
    ("alice@acme.test", "marketing"): {"color_id": "4"},
}

CALENDAR_IDS: dict[str, str] = {key: calendar_id(key) for key, *_ in _SECONDARY}


def _calendars() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    calendars: list[dict[str, Any]] = []
    acl: list[dict[str, Any]] = []
    lists: list[dict[str, Any]] = []
    for user in USERS:
        email = user["email"]
        domain = email.split("@")[1]
        acl.append({"calendar": email, "scope": f"domain:{domain}", "role": "freeBusyReader"})
        for scope, role in _PRIMARY_SHARES.get(email, {}).items():
            acl.append({"calendar": email, "scope": scope, "role": role})
        for other in _PRIMARY_SUBSCRIPTIONS.get(email, []):
            lists.append({"user": email, "calendar": other})
    for key, owner, summary, tz, description, rules, subscribers in _SECONDARY:
        cid = CALENDAR_IDS[key]
        calendars.append(
            {
                "id": cid,
                "summary": summary,
                "time_zone": tz,
                "owner": owner,
                "description": description,
            }
        )
        for scope, role in rules.items():
            acl.append({"calendar": cid, "scope": scope, "role": role})
        for user_email in subscribers:
            lists.append({"user": user_email, "calendar": cid})
    for (user_email, key), fields in _OVERRIDES.items():
        lists.append({"user": user_email, "calendar": CALENDAR_IDS[key], **fields})
    return calendars, acl, lists


def world_data() -> dict[str, list[dict[str, Any]]]:
    """The whole seed world in the loader's format (a fresh copy each call)."""
    calendars, acl, lists = _calendars()
    return {
        "users": [dict(u) for u in USERS],
        "groups": [dict(g, members=list(g["members"])) for g in GROUPS],
        "calendars": calendars,
        "acl": acl,
        "calendar_list": lists,
        "events": seed_events(),
        "settings": [],
    }
