"""Checkers for the `x-format` markers of the tool schemas (times, zones, emails, RRULEs, ...).

Each checker receives the value (already of the right JSON type), its argument path, and a
context with the time zone to quote in hints; it returns `ApiError`s with a concrete correction.

Example:
    >>> from calendar_gym.tools.formats import FormatContext, check_format
    >>> [e.code for e in check_format("rfc3339", "2026-03-05", "timeMin", FormatContext())]
    ['INVALID_FORMAT']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from calendar_gym.world.errors import ApiError, nest
from calendar_gym.world.recurrence import check_recurrence
from calendar_gym.world.timeutil import (
    TimeError,
    is_valid_zone,
    loose_parse,
    offset_for,
    parse_date,
    parse_event_datetime,
    parse_rfc3339,
    suggest_zone,
)

__all__ = ["EMAIL_RE", "FormatContext", "check_format"]

EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
_DOMAIN_RE = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
_EVENT_ID_RE = re.compile(r"^[a-v0-9]{5,1024}$")
_HEX_RE = re.compile(r"^#[0-9a-fA-F]{6}$")


class FormatContext:
    """What hints may mention: the zone the caller most likely means (resolved only if needed)."""

    def __init__(self, default_tz: str | Callable[[], str] = "UTC") -> None:
        self._tz = default_tz

    @property
    def default_tz(self) -> str:
        """The zone to quote in hints (computed on first use)."""
        if callable(self._tz):
            self._tz = self._tz()
        return self._tz


def _offset_hint(local_text: str, tz_name: str) -> tuple[str, str] | None:
    loose = loose_parse(local_text)
    if loose is None or not is_valid_zone(tz_name):
        return None
    off = offset_for(tz_name, loose.local)
    return loose.rfc3339(off), loose.rfc3339(off)[19:]


def _email(value: str, path: str, ctx: FormatContext) -> list[ApiError]:
    if EMAIL_RE.match(value.strip()):
        return []
    looks_like_name = "@" not in value
    hint = (
        f"Use directory_search(query={value!r}) to find this person's email address."
        if looks_like_name
        else "Check the address for typos; it must look like name@domain.tld."
    )
    return [
        ApiError(
            "INVALID_FORMAT",
            f"{path} must be an email address; got {value!r}.",
            field=path,
            expected="an email address, e.g. bob@acme.test",
            got=value,
            hint=hint,
        )
    ]


def _time_zone(value: str, path: str, ctx: FormatContext) -> list[ApiError]:
    if is_valid_zone(value):
        return []
    near = suggest_zone(value)
    return [
        ApiError(
            "INVALID_FORMAT",
            f"{path} must be an IANA time zone; {value!r} is not one.",
            field=path,
            expected="IANA time zone name, e.g. America/New_York",
            got=value,
            hint=f"Did you mean {near!r}?" if near else "Use an IANA name like Europe/London.",
            example=nest(path, near) if near else None,
            suggestion=near,
        )
    ]


def _rfc3339(value: str, path: str, ctx: FormatContext) -> list[ApiError]:
    try:
        parse_rfc3339(value)
        return []
    except TimeError as err:
        kind = err.kind
    tz = ctx.default_tz
    fixed = _offset_hint(value, tz)
    example = nest(path, fixed[0]) if fixed else None
    if kind == "range":
        return [
            ApiError(
                "INVALID_VALUE",
                f"{path}: {value!r} is not a real date-time.",
                field=path,
                expected="a real calendar date and time",
                got=value,
                hint="Check the month and day.",
            )
        ]
    if kind == "date_only" and fixed:
        hint = f"Add a time and offset, e.g. {fixed[0]} for the start of that day in {tz}."
    elif kind == "no_offset" and fixed:
        hint = f"Add the offset for {tz} ({fixed[1]}): {fixed[0]}."
    elif fixed:
        hint = f"Write it as RFC 3339: {fixed[0]}."
    else:
        hint = "Write it as RFC 3339 with an offset, e.g. 2026-03-05T00:00:00-05:00."
    return [
        ApiError(
            "INVALID_FORMAT",
            f"{path} must be an RFC 3339 date-time with an offset; got {value!r}.",
            field=path,
            expected="RFC 3339 date-time with offset, e.g. 2026-03-05T00:00:00-05:00",
            got=value,
            hint=hint,
            example=example,
        )
    ]


def _event_datetime(value: dict[str, Any], path: str, ctx: FormatContext) -> list[ApiError]:
    problems: list[ApiError] = []
    tz = value.get("timeZone")
    if tz is not None:
        problems += _time_zone(tz, f"{path}.timeZone", ctx)
    zone_ok = tz is not None and not problems
    has_date, has_dt = value.get("date") is not None, value.get("dateTime") is not None
    if has_date and has_dt:
        problems.append(
            ApiError(
                "INVALID_VALUE",
                f"{path} has both date and dateTime; give exactly one.",
                field=path,
                expected="either dateTime (timed event) or date (all-day event)",
                got=value,
                hint=f"Drop {path}.date for a timed event, or {path}.dateTime for an all-day one.",
            )
        )
        return problems
    if not has_date and not has_dt:
        problems.append(
            ApiError(
                "MISSING_REQUIRED_FIELD",
                f"{path} needs dateTime (timed event) or date (all-day event).",
                field=f"{path}.dateTime",
                expected="RFC 3339 date-time, e.g. 2026-03-05T10:00:00-05:00",
                hint=f"Set {path}.dateTime, or {path}.date for an all-day event.",
                example=nest(path, {"dateTime": "2026-03-05T10:00:00-05:00"}),
            )
        )
        return problems
    if has_date:
        text = value["date"]
        try:
            parse_date(text)
        except TimeError:
            timed = loose_parse(text)
            hint = (
                f"{path}.date takes only YYYY-MM-DD; for a timed event use {path}.dateTime."
                if timed is not None and timed.has_time
                else "Write the date as YYYY-MM-DD, e.g. 2026-03-05."
            )
            problems.append(
                ApiError(
                    "INVALID_FORMAT",
                    f"{path}.date must be YYYY-MM-DD; got {text!r}.",
                    field=f"{path}.date",
                    expected="YYYY-MM-DD, e.g. 2026-03-05",
                    got=text,
                    hint=hint,
                )
            )
        return problems
    field = f"{path}.dateTime"
    text = value["dateTime"]
    hint_tz = str(tz) if zone_ok else ctx.default_tz
    try:
        parse_event_datetime(text, tz if zone_ok else None)
        return problems
    except TimeError as err:
        kind = err.kind
    fixed = _offset_hint(text, hint_tz)
    loose = loose_parse(text)
    expected = "RFC 3339 date-time, e.g. 2026-03-05T10:00:00-05:00"
    if tz is not None and not zone_ok and loose is not None and loose.offset is None:
        return problems  # the time zone's own error explains it
    if kind == "gap":
        problems.append(
            ApiError(
                "INVALID_VALUE",
                f"{field} {text} does not exist in {hint_tz}: clocks jump forward an hour then.",
                field=field,
                expected=f"a local time that exists in {hint_tz}",
                got=text,
                hint=(
                    "This wall-clock time never occurs on that day: the clocks skip an hour. "
                    "Which existing time is meant is for the requester to say."
                ),
            )
        )
        return problems
    if kind == "range":
        problems.append(
            ApiError(
                "INVALID_VALUE",
                f"{field}: {text!r} is not a real date-time.",
                field=field,
                expected=expected,
                got=text,
                hint="Check the month, day and hour.",
            )
        )
        return problems
    if kind == "date_only":
        message = f"{field} is a date only; a date-only value is accepted only as {path}.date."
        hint = (
            f"For an all-day event use {path}.date = {text!r}; for a timed event add a time, "
            f"e.g. {fixed[0] if fixed else text + 'T09:00:00-05:00'}."
        )
        example = nest(path, {"date": text})
    elif zone_ok and loose is not None:  # a local time with a zone, only spelled wrongly
        corrected = loose.rfc3339()
        message = f"{field} must be written YYYY-MM-DDTHH:MM:SS; got {text!r}."
        hint = f"Write it as {corrected} (with {path}.timeZone {tz})."
        example = nest(path, {"dateTime": corrected, "timeZone": tz})
    elif loose is not None and loose.offset is not None:  # an offset, but spelled wrongly
        corrected = loose.rfc3339()
        message = f"{field} must be RFC 3339; got {text!r}."
        hint = f"Write it as {corrected}."
        example = nest(path, {"dateTime": corrected})
    else:
        message = f"{field} must be RFC 3339 with an offset, or be paired with {path}.timeZone."
        if fixed and loose is not None:
            hint = f"Add the offset for {hint_tz} ({fixed[1]}) or set {path}.timeZone."
            example = nest(path, {"dateTime": fixed[0]})
        else:
            hint = "Write it like 2026-03-05T10:00:00-05:00."
            example = nest(path, {"dateTime": "2026-03-05T10:00:00-05:00"})
    problems.append(
        ApiError(
            "INVALID_FORMAT",
            message,
            field=field,
            expected=expected,
            got=text,
            hint=hint,
            example=example,
            google_message=f"Invalid {path} time.",
        )
    )
    return problems


def _recurrence(value: list[str], path: str, ctx: FormatContext) -> list[ApiError]:
    return [
        ApiError(
            "INVALID_FORMAT",
            f"{path}[{i}]: {problem.message}.",
            field=f"{path}[{i}]",
            expected="RFC 5545 lines, e.g. RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10",
            got=value[i],
            hint=problem.hint,
            google_message="Invalid recurrence rule.",
        )
        for i, problem in check_recurrence(value)
    ]


def _event_id(value: str, path: str, ctx: FormatContext) -> list[ApiError]:
    if _EVENT_ID_RE.match(value):
        return []
    return [
        ApiError(
            "INVALID_FORMAT",
            f"{path} {value!r} is not a valid event id.",
            field=path,
            expected="5-1024 characters from a-v and 0-9 (base32hex)",
            got=value,
            hint="Leave id out and the calendar assigns one.",
        )
    ]


def _hex_color(value: str, path: str, ctx: FormatContext) -> list[ApiError]:
    if _HEX_RE.match(value):
        return []
    return [
        ApiError(
            "INVALID_FORMAT",
            f"{path} must be a hex color like #9fc6e7; got {value!r}.",
            field=path,
            expected="#rrggbb",
            got=value,
            hint="Or set colorId to one of the ids from colors_get.",
        )
    ]


def _acl_scope(value: dict[str, Any], path: str, ctx: FormatContext) -> list[ApiError]:
    kind, scope_value = value.get("type"), value.get("value")
    field = f"{path}.value"
    if kind == "default":
        if scope_value:
            return [
                ApiError(
                    "INVALID_VALUE",
                    f"{path}.type 'default' (everyone) takes no value; got {scope_value!r}.",
                    field=field,
                    expected="no value",
                    got=scope_value,
                    hint=f"Drop {field}, or use type 'user'/'group'/'domain' to target it.",
                )
            ]
        return []
    if not scope_value:
        return [
            ApiError(
                "MISSING_REQUIRED_FIELD",
                f"{path}.value is required for scope type {kind!r}.",
                field=field,
                expected="an email address" if kind != "domain" else "a domain, e.g. acme.test",
                hint="Use directory_search to find people and groups.",
                example={
                    "scope": {
                        "type": kind,
                        "value": "bob@acme.test" if kind != "domain" else "acme.test",
                    }
                },
            )
        ]
    if kind == "domain":
        if _DOMAIN_RE.match(scope_value):
            return []
        domain = scope_value.rpartition("@")[2]
        return [
            ApiError(
                "INVALID_FORMAT",
                f"{field} must be a domain name for scope type 'domain'; got {scope_value!r}.",
                field=field,
                expected="a domain, e.g. acme.test",
                got=scope_value,
                hint=f"Use {domain!r}, or scope type 'user' to share with one person."
                if "@" in scope_value
                else "Use a domain such as acme.test.",
            )
        ]
    return _email(scope_value, field, ctx)


_CHECKERS: dict[str, Callable[[Any, str, FormatContext], list[ApiError]]] = {
    "email": _email,
    "time-zone": _time_zone,
    "rfc3339": _rfc3339,
    "event-datetime": _event_datetime,
    "recurrence": _recurrence,
    "event-id": _event_id,
    "hex-color": _hex_color,
    "acl-scope": _acl_scope,
}


def check_format(kind: str, value: Any, path: str, ctx: FormatContext) -> list[ApiError]:
    """Problems of `value` against the format `kind` (unknown kinds are a programming error)."""
    return _CHECKERS[kind](value, path, ctx)
