"""Load world data (the seed world, or a task's `seed_patch`) into a database.

The format is deliberately terse, for people writing tasks::

    {"users": [{"email": "zoe@acme.test", "name": "Zoe Park", "time_zone": "Europe/Paris"}],
     "groups": [{"email": "ops@acme.test", "name": "Ops", "members": ["zoe@acme.test"]}],
     "calendars": [{"id": "ops@group.calendar.google.com", "summary": "Ops",
                    "owner": "zoe@acme.test", "time_zone": "Europe/Paris"}],
     "acl": [{"calendar": "ops@group.calendar.google.com", "scope": "group:ops@acme.test",
              "role": "writer"}],
     "calendar_list": [{"user": "alice@acme.test", "calendar": "ops@group.calendar.google.com",
                        "summary_override": "Operations"}],
     "events": [{"calendar": "zoe@acme.test", "summary": "Standup",
                 "start": "2026-03-05T09:00:00", "end": "2026-03-05T09:15:00",
                 "recurrence": ["RRULE:FREQ=DAILY;COUNT=5"], "attendees": ["alice@acme.test"]}],
     "settings": [{"user": "zoe@acme.test", "id": "weekStart", "value": "1"}]}

A user gets a primary calendar (id = email), an owner ACL rule and a calendar-list entry; a
calendar gets its owner's rule and list entry. Local event times are in the event's `time_zone`
(default: the calendar's); a bare date makes an all-day event. Rows are upserted, so a patch can
also change seed rows (e.g. an ACL role).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from calendar_gym.world.colors import CALENDAR_COLORS, calendar_color_for
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import make_etag, original_start_value, times_from_body
from calendar_gym.world.ids import event_id
from calendar_gym.world.timeutil import is_valid_zone, parse_event_datetime, parse_rfc3339

__all__ = ["SECTIONS", "LoadError", "default_settings", "load"]

SECTIONS = ("users", "groups", "calendars", "acl", "calendar_list", "events", "settings")
SEED_STAMP = "2026-02-01T12:00:00.000Z"


class LoadError(ValueError):
    """World data that cannot be loaded; the message names the section, row and field."""


def default_settings(time_zone: str) -> dict[str, str]:
    """A new user's calendar settings (Google's defaults)."""
    return {
        "timezone": time_zone,
        "locale": "en",
        "weekStart": "0",
        "format24HourTime": "false",
        "dateFieldOrder": "MDY",
        "defaultEventLength": "60",
        "hideWeekends": "false",
        "showDeclinedEvents": "true",
        "hideInvitations": "false",
        "remindOnRespondedEventsOnly": "false",
        "autoAddHangouts": "false",
        "useKeyboardShortcuts": "true",
    }


def _need(row: Mapping[str, Any], key: str, where: str) -> Any:
    if row.get(key) in (None, ""):
        raise LoadError(f"{where}: missing {key!r}")
    return row[key]


class _Loader:
    def __init__(self, conn: sqlite3.Connection, stamp: str) -> None:
        self.conn = conn
        self.stamp = stamp

    def x(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        self.conn.execute(sql, params)

    def one(self, sql: str, params: tuple[Any, ...]) -> Any:
        return self.conn.execute(sql, params).fetchone()

    def user(self, row: Mapping[str, Any], where: str) -> None:
        email = str(_need(row, "email", where)).lower()
        name = _need(row, "name", where)
        tz = row.get("time_zone", "America/New_York")
        if not is_valid_zone(tz):
            raise LoadError(f"{where}: unknown time zone {tz!r}")
        given, _, family = name.partition(" ")
        self.x(
            "INSERT OR REPLACE INTO users VALUES (?, ?, ?, ?, ?, ?, ?)",
            (email, name, given, family, email.split("@")[1], tz, row.get("title", "")),
        )
        self.calendar(
            {"id": email, "summary": email, "owner": email, "time_zone": tz, "primary": True},
            where,
        )
        for key, value in default_settings(tz).items():
            self.x("INSERT OR IGNORE INTO settings VALUES (?, ?, ?)", (email, key, value))

    def group(self, row: Mapping[str, Any], where: str) -> None:
        email = str(_need(row, "email", where)).lower()
        self.x(
            "INSERT OR REPLACE INTO groups VALUES (?, ?, ?)",
            (email, _need(row, "name", where), row.get("description", "")),
        )
        for member in row.get("members", []):
            self.x("INSERT OR IGNORE INTO group_members VALUES (?, ?)", (email, member.lower()))

    def calendar(self, row: Mapping[str, Any], where: str) -> None:
        cid = _need(row, "id", where)
        owner = _need(row, "owner", where)
        user = self.one("SELECT time_zone FROM users WHERE email = ?", (owner,))
        if user is None:
            raise LoadError(f"{where}: owner {owner!r} is not a user")
        tz = row.get("time_zone") or user[0]
        if not is_valid_zone(tz):
            raise LoadError(f"{where}: unknown time zone {tz!r}")
        self.x(
            "INSERT OR REPLACE INTO calendars VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)",
            (
                cid,
                _need(row, "summary", where),
                row.get("description", ""),
                row.get("location", ""),
                tz,
                owner,
                int(bool(row.get("primary"))),
                make_etag(cid, self.stamp),
            ),
        )
        self.acl({"calendar": cid, "scope": f"user:{owner}", "role": "owner"}, where)
        self.list_entry({"user": owner, "calendar": cid}, where)

    def acl(self, row: Mapping[str, Any], where: str) -> None:
        cid = _need(row, "calendar", where)
        scope = str(_need(row, "scope", where))
        kind, _, value = scope.partition(":")
        if kind not in ("default", "user", "group", "domain") or (kind != "default") != bool(value):
            raise LoadError(
                f"{where}: scope {scope!r} must be default, user:X, group:X or domain:X"
            )
        role = _need(row, "role", where)
        if role not in ("none", "freeBusyReader", "reader", "writerWithoutPrivateAccess", "writer",
                        "owner"):  # fmt: skip
            raise LoadError(f"{where}: unknown role {role!r}")
        rule_id = scope if kind != "default" else "default"
        self.x(
            "INSERT OR REPLACE INTO acl VALUES (?, ?, ?, ?, ?, ?)",
            (cid, rule_id, kind, value, role, make_etag(cid, rule_id, role, self.stamp)),
        )

    def list_entry(self, row: Mapping[str, Any], where: str) -> None:
        user, cid = _need(row, "user", where), _need(row, "calendar", where)
        if self.one("SELECT 1 FROM calendars WHERE id = ?", (cid,)) is None:
            raise LoadError(f"{where}: calendar {cid!r} does not exist")
        color = str(row.get("color_id") or calendar_color_for(cid))
        self.x(
            "INSERT OR IGNORE INTO calendar_list (user_email, calendar_id, color_id, "
            "background_color, etag) VALUES (?, ?, ?, ?, ?)",
            (user, cid, color, CALENDAR_COLORS[color]["background"], make_etag(user, cid)),
        )
        updates = {
            "summary_override": row.get("summary_override"),
            "color_id": row.get("color_id"),
            "background_color": row.get("color_id") and CALENDAR_COLORS[color]["background"],
            "hidden": None if row.get("hidden") is None else int(bool(row["hidden"])),
            "selected": None if row.get("selected") is None else int(bool(row["selected"])),
        }
        for column, value in updates.items():
            if value is not None:
                self.x(
                    f"UPDATE calendar_list SET {column} = ? "
                    "WHERE user_email = ? AND calendar_id = ?",
                    (value, user, cid),
                )

    def event(self, row: Mapping[str, Any], where: str, index: int) -> None:
        cid = _need(row, "calendar", where)
        cal = self.one("SELECT time_zone, owner, is_primary FROM calendars WHERE id = ?", (cid,))
        if cal is None:
            raise LoadError(f"{where}: calendar {cid!r} does not exist")
        tz = row.get("time_zone") or cal[0]
        eid = row.get("id") or make_etag("patch-event", index, row.get("summary"))[1:-1][:10]
        if row.get("recurring_event"):
            master = event_id(row["recurring_event"])
        else:
            master = row.get("recurring_event_id")
        start, end = (
            self._when(row.get("start"), tz),
            self._when(row.get("end"), row.get("end_time_zone") or tz),
        )
        try:
            cols = times_from_body(start, end, tz)
        except (ApiError, ValueError) as exc:
            raise LoadError(f"{where}: bad start/end: {exc}") from None
        original = None
        if master:
            first = _need(row, "original_start", where)
            original = (
                original_start_value(parse_event_datetime(first, tz)) if "T" in first else first
            )
            suffix = original.replace("-", "").replace(":", "")
            eid = f"{master}_{suffix}"
        organizer = row.get("organizer") or (cal[1] if cal[2] else cid)
        attendees = [self._attendee(a, organizer) for a in row.get("attendees") or []]
        self.x(
            "INSERT OR REPLACE INTO events (calendar_id, id, ical_uid, status, summary, "
            "description, location, color_id, visibility, transparency, all_day, start, end_, "
            "start_tz, end_tz, recurrence, recurring_event_id, original_start, creator, "
            "organizer, attendees, reminders, extended, guest_options, created, updated, "
            "sequence, etag) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cid, eid, f"{master or eid}@google.com", row.get("status", "confirmed"),
                row.get("summary"), row.get("description"), row.get("location"),
                row.get("color_id"), row.get("visibility", "default"),
                row.get("transparency", "opaque"), cols["all_day"], cols["start"], cols["end_"],
                None if cols["all_day"] else tz,
                None if cols["all_day"] else (cols["end_tz"] or tz),
                json.dumps(row["recurrence"]) if row.get("recurrence") else None,
                master, original, row.get("creator") or cal[1], organizer,
                json.dumps(attendees), None, None, None, self.stamp, self.stamp, 0,
                make_etag(cid, eid, 0, self.stamp),
            ),
        )  # fmt: skip

    @staticmethod
    def _when(value: Any, tz: str) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        if not isinstance(value, str):
            raise LoadError(f"event time {value!r} must be a string or an object")
        if len(value) == 10:
            return {"date": value}
        try:
            parse_rfc3339(value)
            return {"dateTime": value}
        except ValueError:
            return {"dateTime": value, "timeZone": tz}

    def _attendee(self, entry: Any, organizer: str) -> dict[str, Any]:
        item = {"email": entry} if isinstance(entry, str) else dict(entry)
        found = self.one("SELECT name FROM users WHERE email = ?", (item["email"],))
        if found and "displayName" not in item:
            item["displayName"] = found[0]
        item.setdefault(
            "responseStatus", "accepted" if item["email"] == organizer else "needsAction"
        )
        return item

    def setting(self, row: Mapping[str, Any], where: str) -> None:
        self.x(
            "INSERT OR REPLACE INTO settings VALUES (?, ?, ?)",
            (_need(row, "user", where), _need(row, "id", where), str(_need(row, "value", where))),
        )


def load(conn: sqlite3.Connection, data: Mapping[str, Any], stamp: str = SEED_STAMP) -> None:
    """Upsert world data (see the module docstring) into `conn`; `LoadError` on bad data."""
    if not isinstance(data, Mapping):
        raise LoadError("world data must be an object of sections")
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise LoadError(f"unknown section(s) {unknown}; known: {', '.join(SECTIONS)}")
    loader = _Loader(conn, stamp)
    handlers = {
        "users": loader.user,
        "groups": loader.group,
        "calendars": loader.calendar,
        "acl": loader.acl,
        "calendar_list": loader.list_entry,
        "settings": loader.setting,
    }
    for section in SECTIONS:
        rows = data.get(section) or []
        if not isinstance(rows, list):
            raise LoadError(f"{section} must be a list of objects")
        for i, row in enumerate(rows):
            where = f"{section}[{i}]"
            if not isinstance(row, Mapping):
                raise LoadError(f"{where} must be an object")
            try:
                if section == "events":
                    loader.event(row, where, i)
                else:
                    handlers[section](row, where)
            except sqlite3.Error as exc:
                raise LoadError(f"{where}: {exc}") from None
            except KeyError as exc:
                raise LoadError(f"{where}: unknown value {exc}") from None
