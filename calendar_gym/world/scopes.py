"""OAuth scopes: which token scopes let a tool run at all (checked before any ACL).

Each tool accepts any one of a set of Google Calendar scopes, as the real API does; a persona with
`calendar.readonly` can read everything and write nothing. Reset options may use short names
(`calendar.readonly`) or full URLs.

Example:
    >>> normalise_scopes(["calendar.readonly"])
    ('https://www.googleapis.com/auth/calendar.readonly',)
    >>> missing_scope("events_insert", normalise_scopes(["calendar.readonly"])) is not None
    True
"""

from __future__ import annotations

from collections.abc import Iterable

from calendar_gym.world.errors import ApiError

__all__ = ["DEFAULT_SCOPES", "KNOWN_SCOPES", "TOOL_SCOPES", "missing_scope", "normalise_scopes"]

_P = "https://www.googleapis.com/auth/"
FULL = _P + "calendar"
READONLY = _P + "calendar.readonly"
EVENTS = _P + "calendar.events"
EVENTS_RO = _P + "calendar.events.readonly"
FREEBUSY = _P + "calendar.freebusy"
SETTINGS_RO = _P + "calendar.settings.readonly"
ACLS = _P + "calendar.acls"
ACLS_RO = _P + "calendar.acls.readonly"
CALENDARLIST = _P + "calendar.calendarlist"
CALENDARLIST_RO = _P + "calendar.calendarlist.readonly"
CALENDARS = _P + "calendar.calendars"
CALENDARS_RO = _P + "calendar.calendars.readonly"

KNOWN_SCOPES = (
    FULL, READONLY, EVENTS, EVENTS_RO, FREEBUSY, SETTINGS_RO, ACLS, ACLS_RO,
    CALENDARLIST, CALENDARLIST_RO, CALENDARS, CALENDARS_RO,
)  # fmt: skip
DEFAULT_SCOPES = (FULL,)

_READ_EVENTS = (FULL, READONLY, EVENTS, EVENTS_RO)
_WRITE_EVENTS = (FULL, EVENTS)
_READ_LIST = (FULL, READONLY, CALENDARLIST, CALENDARLIST_RO)
_WRITE_LIST = (FULL, CALENDARLIST)
_READ_CALS = (FULL, READONLY, CALENDARS, CALENDARS_RO)
_WRITE_CALS = (FULL, CALENDARS)
_READ_ACL = (FULL, ACLS, ACLS_RO)
_WRITE_ACL = (FULL, ACLS)

TOOL_SCOPES: dict[str, tuple[str, ...]] = {
    "calendarList_list": _READ_LIST,
    "calendarList_get": _READ_LIST,
    "calendarList_insert": _WRITE_LIST,
    "calendarList_patch": _WRITE_LIST,
    "calendarList_update": _WRITE_LIST,
    "calendarList_delete": _WRITE_LIST,
    "calendars_get": _READ_CALS,
    "calendars_insert": _WRITE_CALS,
    "calendars_patch": _WRITE_CALS,
    "calendars_update": _WRITE_CALS,
    "calendars_delete": _WRITE_CALS,
    "calendars_clear": _WRITE_CALS,
    "events_list": _READ_EVENTS,
    "events_get": _READ_EVENTS,
    "events_instances": _READ_EVENTS,
    "events_insert": _WRITE_EVENTS,
    "events_import": _WRITE_EVENTS,
    "events_patch": _WRITE_EVENTS,
    "events_update": _WRITE_EVENTS,
    "events_delete": _WRITE_EVENTS,
    "events_move": _WRITE_EVENTS,
    "acl_list": _READ_ACL,
    "acl_get": _READ_ACL,
    "acl_insert": _WRITE_ACL,
    "acl_patch": _WRITE_ACL,
    "acl_update": _WRITE_ACL,
    "acl_delete": _WRITE_ACL,
    "freebusy_query": (FULL, READONLY, EVENTS, EVENTS_RO, FREEBUSY),
    "colors_get": KNOWN_SCOPES,
    "settings_list": (FULL, READONLY, SETTINGS_RO),
    "settings_get": (FULL, READONLY, SETTINGS_RO),
    "directory_search": KNOWN_SCOPES,  # any calendar token may look people up
    "finish": (),  # ending the episode needs no scope
}


def normalise_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """Full scope URLs for short (`calendar.readonly`) or full names; `ValueError` if unknown."""
    out: list[str] = []
    for scope in scopes:
        if not isinstance(scope, str):
            raise ValueError(f"scope {scope!r} must be a string")
        full = scope if scope.startswith("https://") else _P + scope
        if full not in KNOWN_SCOPES:
            raise ValueError(
                f"unknown scope {scope!r}; known: {', '.join(s[len(_P) :] for s in KNOWN_SCOPES)}"
            )
        if full not in out:
            out.append(full)
    return tuple(out)


def missing_scope(tool: str, granted: tuple[str, ...]) -> ApiError | None:
    """`INSUFFICIENT_SCOPE` if none of the scopes `tool` accepts was granted, else `None`."""
    accepted = TOOL_SCOPES.get(tool, (FULL,))
    if not accepted or any(s in granted for s in accepted):
        return None
    writes = accepted in (_WRITE_EVENTS, _WRITE_LIST, _WRITE_CALS, _WRITE_ACL)
    return ApiError(
        "INSUFFICIENT_SCOPE",
        f"This access token does not allow {tool}: it needs one of the scopes "
        f"{', '.join(accepted)}.",
        expected=list(accepted),
        got=list(granted),
        hint=(
            "The token is read-only for this kind of change; no argument will fix it. Only a "
            "new token granted one of the required scopes (by the user who authorised this "
            "session) allows it."
            if writes
            else "This token cannot read this resource; tools your scopes allow still work, and "
            "a token with one of the required scopes would allow this one."
        ),
        required_scopes=list(accepted),
        granted_scopes=list(granted),
    )
