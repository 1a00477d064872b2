"""The SQLite schema of one Calendar Gym world.

Times: timed events store UTC instants as text (`2026-03-05T15:00:00Z`) plus the IANA zone they
were given in; all-day events store `YYYY-MM-DD` dates (end exclusive). An event's `event_type`
is v3's `eventType`; `type_properties` holds its property block (`focusTimeProperties`, ...).
JSON columns hold lists and objects that are only ever read whole. Tables are listed in `TABLES`
with their primary keys, which `Store.dump` uses to produce a canonical, byte-stable dump.
"""

from __future__ import annotations

__all__ = ["DDL", "TABLES"]

DDL = """
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE users (
    email TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    given_name TEXT NOT NULL,
    family_name TEXT NOT NULL,
    domain TEXT NOT NULL,
    time_zone TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT ''
);
CREATE TABLE groups (
    email TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE group_members (
    group_email TEXT NOT NULL REFERENCES groups(email),
    member_email TEXT NOT NULL,
    PRIMARY KEY (group_email, member_email)
);
CREATE INDEX group_members_member ON group_members(member_email);
CREATE TABLE calendars (
    id TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    location TEXT NOT NULL DEFAULT '',
    time_zone TEXT NOT NULL,
    owner TEXT NOT NULL,
    is_primary INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    etag TEXT NOT NULL
);
CREATE TABLE calendar_list (
    user_email TEXT NOT NULL,
    calendar_id TEXT NOT NULL REFERENCES calendars(id),
    summary_override TEXT,
    color_id TEXT NOT NULL DEFAULT '1',
    background_color TEXT NOT NULL DEFAULT '#ac725e',
    foreground_color TEXT NOT NULL DEFAULT '#1d1d1d',
    hidden INTEGER NOT NULL DEFAULT 0,
    selected INTEGER NOT NULL DEFAULT 1,
    default_reminders TEXT NOT NULL DEFAULT '[]',
    etag TEXT NOT NULL,
    PRIMARY KEY (user_email, calendar_id)
);
CREATE TABLE acl (
    calendar_id TEXT NOT NULL REFERENCES calendars(id),
    rule_id TEXT NOT NULL,
    scope_type TEXT NOT NULL CHECK (scope_type IN ('default', 'user', 'group', 'domain')),
    scope_value TEXT NOT NULL DEFAULT '',
    role TEXT NOT NULL CHECK (role IN ('none', 'freeBusyReader', 'reader',
        'writerWithoutPrivateAccess', 'writer', 'owner')),
    etag TEXT NOT NULL,
    PRIMARY KEY (calendar_id, rule_id)
);
CREATE TABLE events (
    calendar_id TEXT NOT NULL REFERENCES calendars(id),
    id TEXT NOT NULL,
    ical_uid TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'confirmed',
    summary TEXT,
    description TEXT,
    location TEXT,
    color_id TEXT,
    visibility TEXT NOT NULL DEFAULT 'default',
    transparency TEXT NOT NULL DEFAULT 'opaque',
    all_day INTEGER NOT NULL DEFAULT 0,
    start TEXT NOT NULL,
    end_ TEXT NOT NULL,
    start_tz TEXT,
    end_tz TEXT,
    recurrence TEXT,
    recurring_event_id TEXT,
    original_start TEXT,
    creator TEXT NOT NULL,
    organizer TEXT NOT NULL,
    attendees TEXT NOT NULL DEFAULT '[]',
    reminders TEXT,
    extended TEXT,
    guest_options TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    sequence INTEGER NOT NULL DEFAULT 0,
    etag TEXT NOT NULL,
    event_type TEXT NOT NULL DEFAULT 'default',
    type_properties TEXT,
    PRIMARY KEY (calendar_id, id)
);
CREATE INDEX events_master ON events(calendar_id, recurring_event_id);
CREATE TABLE settings (
    user_email TEXT NOT NULL,
    id TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (user_email, id)
);
"""

TABLES: dict[str, tuple[str, ...]] = {
    "meta": ("key",),
    "users": ("email",),
    "groups": ("email",),
    "group_members": ("group_email", "member_email"),
    "calendars": ("id",),
    "calendar_list": ("user_email", "calendar_id"),
    "acl": ("calendar_id", "rule_id"),
    "events": ("calendar_id", "id"),
    "settings": ("user_email", "id"),
}
