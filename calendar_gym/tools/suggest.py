"""Did-you-mean for argument and tool names.

Agents rarely misspell; they use the word another API uses (`title` for `summary`,
`create_event` for `events_insert`). So a synonym table comes first, then a spelling-insensitive
comparison (`calendar_id` → `calendarId`), then edit distance.

Example:
    >>> suggest_field("title", ["summary", "start", "end"])
    'summary'
    >>> suggest_field("calendar_id", ["calendarId", "eventId"])
    'calendarId'
    >>> suggest_tools("create_event", ["events_insert", "events_list", "calendars_insert"])
    ['events_insert']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

__all__ = ["FIELD_HINTS", "suggest_field", "suggest_tools"]

_FIELD_SYNONYMS: dict[str, tuple[str, ...]] = {
    "title": ("summary", "q"),
    "name": ("summary", "query"),
    "subject": ("summary",),
    "notes": ("description",),
    "body": ("description",),
    "details": ("description",),
    "place": ("location",),
    "where": ("location",),
    "room": ("location",),
    "guests": ("attendees",),
    "participants": ("attendees",),
    "invitees": ("attendees",),
    "attendee": ("attendees",),
    "emails": ("attendees",),
    "tz": ("timeZone",),
    "begin": ("start",),
    "from": ("timeMin", "start"),
    "to": ("timeMax", "end"),
    "until": ("timeMax",),
    "since": ("timeMin",),
    "after": ("timeMin",),
    "before": ("timeMax",),
    "starttime": ("start", "timeMin"),
    "endtime": ("end", "timeMax"),
    "calendar": ("calendarId", "id"),
    "calendarid": ("calendarId", "id"),
    "cal": ("calendarId",),
    "event": ("eventId",),
    "eventid": ("eventId", "id"),
    "query": ("q", "query"),
    "search": ("q", "query"),
    "text": ("q", "query"),
    "keyword": ("q", "query"),
    "limit": ("maxResults",),
    "count": ("maxResults",),
    "pagesize": ("maxResults",),
    "rrule": ("recurrence",),
    "repeat": ("recurrence",),
    "recurrencerule": ("recurrence",),
    "permission": ("role",),
    "access": ("role",),
    "accessrole": ("role", "minAccessRole"),
    "color": ("colorId",),
    "destinationcalendarid": ("destination",),
    "targetcalendar": ("destination",),
    "to_calendar": ("destination",),
    "rule": ("ruleId",),
    "notify": ("sendUpdates",),
    "privacy": ("visibility",),
    "private": ("visibility",),
    "busy": ("transparency", "opaque"),
    "free": ("transparent",),
    "editor": ("writer",),
    "edit": ("writer",),
    "write": ("writer",),
    "viewer": ("reader",),
    "view": ("reader",),
    "read": ("reader",),
    "admin": ("owner",),
    "freebusy": ("freeBusyReader",),
    "public": ("default",),
    "everyone": ("default",),
    "showavailability": ("transparency",),
    "calendars": ("items",),
    "ids": ("items",),
    "user": ("scope",),
    "email": ("scope", "email"),
    "grantee": ("scope",),
    "message": ("summary",),
    "result": ("status",),
    "outcome": ("status",),
    "state": ("status",),
}

FIELD_HINTS: dict[str, str] = {
    "allDay": "For an all-day event give start.date and end.date (YYYY-MM-DD, end exclusive) "
    "instead of dateTime.",
    "all_day": "For an all-day event give start.date and end.date (YYYY-MM-DD, end exclusive) "
    "instead of dateTime.",
    "duration": "Give end explicitly: end = start + duration, in the same form as start.",
    "attendeeEmails": 'Give attendees as a list of objects: [{"email": "bob@acme.test"}].',
}


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def suggest_field(name: str, allowed: Iterable[str]) -> str | None:
    """The allowed field an agent most likely meant by `name`, or `None`."""
    options = list(allowed)
    if not options:
        return None
    key = _norm(name)
    for cand in _FIELD_SYNONYMS.get(key, ()) + _FIELD_SYNONYMS.get(name.lower(), ()):
        if cand in options:
            return cand
    by_norm = {_norm(o): o for o in options}
    if key in by_norm:
        return by_norm[key]
    near = difflib.get_close_matches(key, list(by_norm), n=1, cutoff=0.72)
    return by_norm[near[0]] if near else None


_VERBS: dict[str, str] = {
    "create": "insert",
    "add": "insert",
    "new": "insert",
    "make": "insert",
    "book": "insert",
    "schedule": "insert",
    "insert": "insert",
    "share": "insert",
    "grant": "insert",
    "list": "list",
    "search": "list",
    "find": "list",
    "query": "list",
    "all": "list",
    "get": "get",
    "read": "get",
    "show": "get",
    "fetch": "get",
    "view": "get",
    "update": "patch",
    "edit": "patch",
    "modify": "patch",
    "change": "patch",
    "patch": "patch",
    "rename": "patch",
    "reschedule": "patch",
    "replace": "update",
    "delete": "delete",
    "remove": "delete",
    "cancel": "delete",
    "unshare": "delete",
    "revoke": "delete",
    "move": "move",
    "transfer": "move",
    "clear": "clear",
}
_NOUNS: dict[str, tuple[str, ...]] = {
    "event": ("events",),
    "events": ("events",),
    "meeting": ("events",),
    "meetings": ("events",),
    "appointment": ("events",),
    "instance": ("events_instances",),
    "instances": ("events_instances",),
    "occurrences": ("events_instances",),
    "calendar": ("calendars", "calendarList"),
    "calendars": ("calendarList", "calendars"),
    "calendarlist": ("calendarList",),
    "acl": ("acl",),
    "acls": ("acl",),
    "permission": ("acl",),
    "permissions": ("acl",),
    "access": ("acl",),
    "sharing": ("acl",),
    "share": ("acl",),
    "rule": ("acl",),
    "freebusy": ("freebusy_query",),
    "availability": ("freebusy_query",),
    "busy": ("freebusy_query",),
    "free": ("freebusy_query",),
    "color": ("colors_get",),
    "colors": ("colors_get",),
    "setting": ("settings",),
    "settings": ("settings",),
    "timezone": ("settings_get",),
    "user": ("directory_search",),
    "users": ("directory_search",),
    "people": ("directory_search",),
    "person": ("directory_search",),
    "contact": ("directory_search",),
    "contacts": ("directory_search",),
    "directory": ("directory_search",),
    "group": ("directory_search",),
    "done": ("finish",),
    "submit": ("finish",),
    "end": ("finish",),
}


def _tokens(name: str) -> list[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def suggest_tools(name: str, available: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` existing tool names an agent most likely meant by `name`."""
    tools = list(available)
    by_norm = {_norm(t): t for t in tools}
    if _norm(name) in by_norm:
        return [by_norm[_norm(name)]]
    toks = _tokens(name)
    verb = next((_VERBS[t] for t in toks if t in _VERBS), None)
    found: list[str] = []
    for t in toks:
        for prefix in _NOUNS.get(t, ()):
            for tool in tools:
                fits = tool == prefix or (
                    tool.startswith(prefix + "_") and (verb is None or tool.endswith("_" + verb))
                )
                if fits and tool not in found:
                    found.append(tool)
    if verb == "insert" and any(t in ("share", "grant") for t in toks) and "acl_insert" in tools:
        found.insert(0, "acl_insert")
    if verb is None:  # a resource without a verb: closest spelling first, not tool order
        found.sort(key=lambda t: -difflib.SequenceMatcher(None, name.lower(), t.lower()).ratio())
    if not found:
        found = difflib.get_close_matches(name, tools, n=n, cutoff=0.55)
    return list(dict.fromkeys(found))[:n]
