"""Comparing values the way a grader should: instants not spellings, emails without case.

`matches(expected, actual)` is used both for assertions over the final state and for aligning an
agent's call arguments with the gold plan:

- strings compare trimmed and case-insensitively; two RFC 3339 date-times compare as instants
  (`2026-03-05T10:00:00-05:00` equals `2026-03-05T15:00:00Z`); `primary` equals the acting user;
- an event time object (`{"dateTime": ..., "timeZone": ...}`) compares by the instant it means,
  so a local time with its zone equals the same moment written with an offset;
- lists compare as multisets; lists of people (emails or `{"email": ...}`) as sets of emails,
  ignoring the acting user (adding yourself as a guest changes nothing);
- an expected dict compares only the keys it names; operators: `{"$any": true}`,
  `{"$icontains": "text"}` (a string, or a list with a string, containing it),
  `{"$contains": [...]}` (a list holding these), `{"$in": [...]}`, `{"$ne": value}`.

`resolve` replaces `{"$e": "key"}` (an entity's true value) and `{"$from": "step.path"}` (part of
an earlier step's result) inside a value.

Example:
    >>> matches("2026-03-05T10:00:00-05:00", "2026-03-05T15:00:00Z")
    True
    >>> matches({"dateTime": "2026-03-10T09:00:00-04:00"},
    ...         {"dateTime": "2026-03-10T09:00:00", "timeZone": "America/New_York"})
    True
    >>> matches([{"email": "Bob@acme.test"}], [{"email": "bob@acme.test"},
    ...         {"email": "alice@acme.test"}], user="alice@acme.test")
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from calendar_gym.tasks.model import Task
from calendar_gym.world.timeutil import (
    TimeError,
    format_in_zone,
    parse_event_datetime,
    parse_rfc3339,
)

__all__ = ["ANY", "entity_value", "instant", "is_ref", "matches", "resolve"]


class _Any:
    """Matches anything (an unresolved `$from`)."""

    def __repr__(self) -> str:
        return "ANY"


ANY: Any = _Any()

_OPERATORS = ("$any", "$icontains", "$contains", "$in", "$ne")


def instant(value: Any) -> datetime | None:
    """The instant an RFC 3339 string (with offset) or an event time object denotes, else None."""
    try:
        if isinstance(value, str) and "T" in value:
            return parse_rfc3339(value.strip())
        if isinstance(value, Mapping) and isinstance(value.get("dateTime"), str):
            return parse_event_datetime(value["dateTime"].strip(), value.get("timeZone"))
    except (TimeError, ValueError):
        return None
    return None


def _email(item: Any) -> str | None:
    if isinstance(item, Mapping) and isinstance(item.get("email"), str):
        return item["email"].strip().lower()
    if isinstance(item, str) and "@" in item and " " not in item.strip():
        return item.strip().lower()
    return None


def _is_people(items: list[Any]) -> bool:
    return bool(items) and all(_email(i) is not None for i in items)


def _scalar(expected: Any, actual: Any, user: str | None) -> bool:
    if isinstance(expected, str) and isinstance(actual, str):
        e, a = instant(expected), instant(actual)
        if e is not None or a is not None:
            return e is not None and a is not None and e == a
        ne, na = expected.strip().casefold(), actual.strip().casefold()
        if user:
            ne = user if ne == "primary" else ne
            na = user if na == "primary" else na
        return ne == na
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual or (
            expected in (0, 1) and actual in (0, 1) and expected == actual
        )
    return bool(expected == actual)


def _operator(expected: Mapping[str, Any], actual: Any, user: str | None) -> bool:
    if "$any" in expected:
        return True
    if "$icontains" in expected:
        needle = str(expected["$icontains"]).casefold()
        texts = actual if isinstance(actual, list) else [actual]
        return any(isinstance(t, str) and needle in t.casefold() for t in texts)
    if "$in" in expected:
        return any(matches(option, actual, user=user) for option in expected["$in"])
    if "$ne" in expected:
        return not matches(expected["$ne"], actual, user=user)
    wanted = expected["$contains"]
    if not isinstance(actual, list):
        return False
    if _is_people(list(wanted)) and (not actual or _is_people(actual)):
        return {_email(w) for w in wanted} <= {_email(a) for a in actual}
    return all(any(matches(w, a, user=user) for a in actual) for w in wanted)


def _lists(expected: list[Any], actual: list[Any], user: str | None) -> bool:
    if _is_people(expected) or (not expected and _is_people(actual)):
        if actual and not _is_people(actual):
            return False
        drop = {user} if user else set()
        return {_email(e) for e in expected} - drop == {_email(a) for a in actual} - drop
    if len(expected) != len(actual):
        return False
    free = list(actual)
    for e in expected:
        hit = next((i for i, a in enumerate(free) if matches(e, a, user=user)), None)
        if hit is None:
            return False
        free.pop(hit)
    return True


def matches(expected: Any, actual: Any, *, user: str | None = None) -> bool:
    """Whether `actual` satisfies `expected` (see the module docstring)."""
    if expected is ANY:
        return True
    if isinstance(expected, Mapping):
        if any(k in expected for k in _OPERATORS):
            return _operator(expected, actual, user)
        if "dateTime" in expected:
            e, a = instant(expected), instant(actual)
            if e is not None or a is not None:
                return e is not None and a is not None and e == a
            # neither is a real instant (a local time the clocks skip): compare as written
        if not isinstance(actual, Mapping):
            return False
        return all(k in actual and matches(v, actual[k], user=user) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and _lists(expected, actual, user)
    if expected is None:
        return actual in (None, "", [])
    return _scalar(expected, actual, user)


# -- references ------------------------------------------------------------------------------------


def entity_value(task: Task, ref: str) -> Any:
    """The true value of entity reference `key` or `key.end` (a slot's end); None if it has none.

    Raises `KeyError` for an unknown entity.
    """
    key, _, attr = ref.partition(".")
    entity = task.entities[key]
    if entity.kind in ("time", "slot"):
        if attr == "end":
            start = parse_rfc3339(entity.value or "")
            tz_offset = (entity.value or "")[19:]
            end = start + timedelta(minutes=entity.minutes or 0)
            return _with_offset(end, tz_offset)
        return entity.value
    return entity.id


def _with_offset(moment: datetime, offset: str) -> str:
    """`moment` written with the same offset text as the entity's value (e.g. `-04:00`)."""
    if offset in ("Z", ""):
        return format_in_zone(moment, None)
    sign = -1 if offset[0] == "-" else 1
    hours, minutes = int(offset[1:3]), int(offset[4:6])
    local = moment + sign * timedelta(hours=hours, minutes=minutes)
    return local.strftime("%Y-%m-%dT%H:%M:%S") + offset


def is_ref(value: Any) -> bool:
    """Whether `value` is an `$e` or `$from` reference."""
    return isinstance(value, Mapping) and len(value) == 1 and ("$e" in value or "$from" in value)


def _path(result: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(result, Mapping) and part in result:
            result = result[part]
        elif isinstance(result, list) and part.isdigit() and int(part) < len(result):
            result = result[int(part)]
        else:
            return ANY
    return result


def resolve(
    value: Any,
    entity: Callable[[str], Any],
    results: Mapping[str, Any] | None = None,
) -> Any:
    """`value` with every `$e` replaced by `entity(ref)` and every `$from` by the named part of
    an earlier step's result (`ANY` when that step has no result yet)."""
    if isinstance(value, Mapping):
        if "$e" in value and len(value) == 1:
            return entity(str(value["$e"]))
        if "$from" in value and len(value) == 1:
            step, _, path = str(value["$from"]).partition(".")
            if results is None or step not in results:
                return ANY
            return _path(results[step], path) if path else results[step]
        return {k: resolve(v, entity, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, entity, results) for v in value]
    return value
