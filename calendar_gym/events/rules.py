"""Rules an event write must satisfy that need the whole resulting event: typed events
(`eventType`) and, from suite v2 on, the time zone of a recurring event.

Both follow Google's discovery document (`calendar.v3.json`) and its event-type guides:

- `eventType` "cannot be modified after the event is created"; `fromGmail` "cannot be created";
  `focusTime`, `outOfOffice` and `workingLocation` ("status events") exist only on primary
  calendars; a focusTime or outOfOffice event is a timed, opaque event with its property block;
  a workingLocation event is public and transparent, timed or one whole day, with
  `workingLocationProperties.type`; a birthday is a private, transparent, one-day all-day event
  repeating yearly, and the API creates only `birthdayProperties.type` 'birthday'. A property
  block belongs to its own type only. `events_update` replaces the event, so it must repeat the
  block (Google: an update "must keep the required fields").
- `EventDateTime.timeZone`: "For recurring events this field is required". Suite v1's gold plans
  create a series without it, so the rule is gated by the suite version (`VERSION_RULES`) and v1
  scores stay reproducible. All-day series repeat by date and need no zone.

`check_write` gathers every broken rule of one write into one `ApiError` (field, expected value,
hint and a corrected `example`), so an agent fixes them in one go.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from calendar_gym.world.errors import ApiError

__all__ = [
    "LATEST",
    "PROPERTY_BLOCKS",
    "STATUS_TYPES",
    "VERSION_RULES",
    "WriteRules",
    "check_write",
    "rule_applies",
]

PROPERTY_BLOCKS = {
    "focusTime": "focusTimeProperties",
    "outOfOffice": "outOfOfficeProperties",
    "workingLocation": "workingLocationProperties",
    "birthday": "birthdayProperties",
}
"""Each event type with a property block, and the block's field name."""
STATUS_TYPES = ("focusTime", "outOfOffice", "workingLocation")
LATEST = "3"
"""The newest suite version: its rules apply unless a reset names an older suite (the task loader
defaults to it too; the tools need it without knowing about tasks)."""
VERSION_RULES = {
    "recurring_time_zone": "2",
    "attendee_sees_private": "3",
    "invitee_copies": "3",
}
"""Rules that hold from a suite version on (older suites keep their reproducible behaviour)."""


def rule_applies(rule: str, suite_version: str) -> bool:
    """Whether `rule` (a key of `VERSION_RULES`) holds in suite `suite_version`."""
    return int(suite_version) >= int(VERSION_RULES[rule])


@dataclass(frozen=True, slots=True)
class WriteRules:
    """What a write is checked against: the target calendar and the suite's rules."""

    primary: bool
    """The event is on a primary calendar (status events need one)."""
    recurring_time_zone: bool
    """A timed recurring event needs start.timeZone and end.timeZone (suite v2+)."""


def check_write(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any],
    body: Mapping[str, Any],
    rules: WriteRules,
    cal_tz: str,
) -> None:
    """Raise one `ApiError` listing every rule the write (`before` → `after`) breaks."""
    problems = _type_problems(before, after, body, rules)
    if rules.recurring_time_zone:
        problems += _zone_problems(after, body, cal_tz)
    if problems:
        raise ApiError.many(problems)


def _invalid(
    field: str, message: str, expected: Any, got: Any, hint: str, example: Any
) -> ApiError:
    return ApiError(
        "INVALID_VALUE", message, field=field, expected=expected, got=got, hint=hint,
        example=example,
    )  # fmt: skip


def _type_problems(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any],
    body: Mapping[str, Any],
    rules: WriteRules,
) -> list[ApiError]:
    kind = str(after["event_type"])
    if before is not None and kind != before["event_type"]:
        return [
            _invalid(
                "eventType",
                f"An event's type cannot change after it is created (this one is "
                f"{before['event_type']!r}).",
                before["event_type"],
                kind,
                f"Leave eventType out, or create a new {kind} event with events_insert and "
                "delete this one.",
                {"eventType": before["event_type"]},
            )
        ]
    if before is None and kind == "fromGmail":
        return [
            _invalid(
                "eventType",
                "fromGmail events cannot be created through the API (Gmail creates them).",
                ["default", "focusTime", "outOfOffice", "workingLocation", "birthday"],
                kind,
                "Leave eventType out for an ordinary event.",
                None,
            )
        ]
    blocks: dict[str, Any] = json.loads(after["type_properties"] or "{}")
    problems = [
        _invalid(
            field,
            f"{field} belongs to eventType {owner!r}; this event is {kind!r}.",
            f"no {field} on a {kind} event",
            blocks[field],
            f"Drop {field}"
            + (f", or create the event with eventType={owner!r}." if before is None else "."),
            {"eventType": owner, field: blocks[field]} if before is None else None,
        )
        for owner, field in PROPERTY_BLOCKS.items()
        if field in blocks and owner != kind
    ]
    if kind in STATUS_TYPES and not rules.primary:
        problems.append(
            _invalid(
                "calendarId",
                f"{kind} events exist only on primary calendars.",
                "a primary calendar",
                after["calendar_id"],
                "Use calendarId='primary' (or a person's email for their primary calendar).",
                {"calendarId": "primary"},
            )
        )
    return problems + _shape_problems(kind, after, blocks, before is None)


def _shape_problems(
    kind: str, after: Mapping[str, Any], blocks: dict[str, Any], creating: bool
) -> list[ApiError]:
    """What each type needs: all-day or timed, transparency, visibility, recurrence, block."""
    if kind not in PROPERTY_BLOCKS:
        return []
    field = PROPERTY_BLOCKS[kind]
    problems: list[ApiError] = []
    all_day, one_day = bool(after["all_day"]), _one_day(after)

    def need(column: str, api: str, value: str) -> None:
        if after[column] != value:
            problems.append(
                _invalid(
                    api, f"A {kind} event must have {api} {value!r}.", value, after[column],
                    f"Set {api}={value!r}.", {api: value},
                )
            )  # fmt: skip

    if kind in ("focusTime", "outOfOffice"):
        if all_day:
            problems.append(
                _invalid(
                    "start.date", f"A {kind} event cannot be all-day: give it start and end "
                    "times.", "start.dateTime and end.dateTime", after["start"],
                    "Use start.dateTime/end.dateTime (e.g. the working day's hours).",
                    None,
                )
            )  # fmt: skip
        need("transparency", "transparency", "opaque")
    elif kind == "workingLocation":
        need("visibility", "visibility", "public")
        need("transparency", "transparency", "transparent")
        if all_day and not one_day:
            problems.append(_one_day_problem(kind, after))
    else:  # birthday
        if not (all_day and one_day):
            problems.append(_one_day_problem(kind, after))
        need("visibility", "visibility", "private")
        need("transparency", "transparency", "transparent")
        rules = json.loads(after["recurrence"] or "[]")
        if len(rules) != 1 or not str(rules[0]).upper().startswith("RRULE:FREQ=YEARLY"):
            problems.append(
                _invalid(
                    "recurrence", "A birthday event repeats every year.", ["RRULE:FREQ=YEARLY"],
                    rules, "Set recurrence=['RRULE:FREQ=YEARLY'].",
                    {"recurrence": ["RRULE:FREQ=YEARLY"]},
                )
            )  # fmt: skip
        btype = (blocks.get(field) or {}).get("type", "birthday")
        if creating and btype != "birthday":
            problems.append(
                _invalid(
                    f"{field}.type", "The API creates only birthday events of type 'birthday'.",
                    "birthday", btype, f"Drop {field}.type or set it to 'birthday'.",
                    {field: {"type": "birthday"}},
                )
            )  # fmt: skip
        return problems
    if field not in blocks:
        example = {"workingLocation": {"type": "homeOffice", "homeOffice": {}}}.get(kind, {})
        problems.append(
            ApiError(
                "MISSING_REQUIRED_FIELD",
                f"A {kind} event needs {field}"
                + ("." if creating else " (an update replaces the event: pass it again)."),
                field=field,
                expected=f"a {field} object",
                hint=f"Add {field}, e.g. {json.dumps(example)}.",
                example={field: example},
            )
        )
    return problems


def _one_day(row: Mapping[str, Any]) -> bool:
    if not row["all_day"]:
        return False
    return (date.fromisoformat(row["end_"]) - date.fromisoformat(row["start"])).days == 1


def _one_day_problem(kind: str, row: Mapping[str, Any]) -> ApiError:
    first = str(row["start"])[:10]
    nxt = date.fromordinal(date.fromisoformat(first).toordinal() + 1).isoformat()
    return _invalid(
        "end.date", f"A {kind} all-day event spans exactly one day.",
        f"end.date = the day after start.date ({nxt})", row["end_"],
        "end.date is exclusive: a one-day event ends on the next day.",
        {"start": {"date": first}, "end": {"date": nxt}},
    )  # fmt: skip


def _zone_problems(
    after: Mapping[str, Any], body: Mapping[str, Any], cal_tz: str
) -> list[ApiError]:
    """A timed recurring event without start/end timeZone (suite v2+)."""
    if not after["recurrence"] or after["all_day"] or after["recurring_event_id"]:
        return []
    problems = []
    fix: dict[str, Any] = {}  # one corrected fragment for every missing zone
    for which, column in (("start", "start_tz"), ("end", "end_tz")):
        given = body.get(which)
        missing = not given.get("timeZone") if given else not after[column]
        if not missing:
            continue
        fix[which] = {**(dict(given) if given else {}), "timeZone": cal_tz}
        problems.append(
            ApiError(
                "MISSING_REQUIRED_FIELD",
                f"A recurring event needs {which}.timeZone: the zone its occurrences repeat "
                "in (so a weekly 9:00 stays at 9:00 across daylight saving changes).",
                field=f"{which}.timeZone",
                expected="an IANA time zone, e.g. " + cal_tz,
                got=None,
                hint=f"Add {which}.timeZone (the calendar's zone is {cal_tz}); the dateTime may "
                "keep its offset. Give start and end again if only the recurrence changed.",
                example=fix,
                google_message=f"Missing time zone definition for {which} time.",
            )
        )
    return problems
