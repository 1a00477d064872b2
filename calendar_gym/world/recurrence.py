"""Recurring events: RFC 5545 recurrence lines, expansion in local wall time, instance ids.

A recurring event is one master row holding its `recurrence` lines (`RRULE:`, `EXDATE`, `RDATE`,
`EXRULE`). Reads expand it with `python-dateutil` in the event's own zone, so a weekly 10:00
meeting stays at 10:00 local time across a daylight-saving change (its UTC instant moves).
Instance ids are `{master}_{YYYYMMDDTHHMMSSZ}` (the original start in UTC) or `{master}_{YYYYMMDD}`
for all-day series.

Example:
    >>> from datetime import datetime
    >>> from calendar_gym.world.timeutil import zone
    >>> starts = occurrence_starts(("RRULE:FREQ=WEEKLY;COUNT=2",), "2026-03-02T10:00:00",
    ...                            "America/New_York", False)
    >>> [instance_suffix(s) for s in starts]
    ['20260302T150000Z', '20260309T140000Z']
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, date, datetime, timedelta

from dateutil.rrule import rrulestr

from calendar_gym.world.timeutil import zone

__all__ = [
    "MAX_INSTANCES",
    "RecurrenceProblem",
    "check_recurrence",
    "instance_suffix",
    "occurrence_starts",
    "split_instance_id",
]

MAX_INSTANCES = 5000
HORIZON = timedelta(days=5 * 366)
_KEYS = (
    "FREQ",
    "UNTIL",
    "COUNT",
    "INTERVAL",
    "BYSECOND",
    "BYMINUTE",
    "BYHOUR",
    "BYDAY",
    "BYMONTHDAY",
    "BYYEARDAY",
    "BYWEEKNO",
    "BYMONTH",
    "BYSETPOS",
    "WKST",
)
_FREQS = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY")
_NAMES = ("RRULE", "EXRULE", "RDATE", "EXDATE")
_SUFFIX = re.compile(r"^(?P<master>.+)_(?P<stamp>\d{8}(?:T\d{6}Z)?)$")
_UNTIL = re.compile(r"UNTIL=(\d{8})(T\d{6})?(Z?)", re.IGNORECASE)


class RecurrenceProblem(ValueError):
    """One recurrence line is unusable: `message` says why, `hint` how to fix it."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def _check_rrule_body(body: str) -> None:
    parts = [p for p in body.split(";") if p]
    seen: dict[str, str] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        key = key.upper()
        if not eq or not value:
            raise RecurrenceProblem(
                f"{part!r} is not KEY=VALUE", "Write e.g. FREQ=WEEKLY;BYDAY=MO."
            )
        if key not in _KEYS:
            import difflib

            near = difflib.get_close_matches(key, _KEYS, n=1)
            tip = f"Did you mean {near[0]}?" if near else f"Known keys: {', '.join(_KEYS)}."
            raise RecurrenceProblem(f"unknown RRULE key {key!r}", tip)
        seen[key] = value
    if "FREQ" not in seen:
        raise RecurrenceProblem(
            "an RRULE needs FREQ", "Start with FREQ=DAILY|WEEKLY|MONTHLY|YEARLY."
        )
    if seen["FREQ"].upper() not in _FREQS:
        raise RecurrenceProblem(
            f"FREQ={seen['FREQ']} is not a frequency", f"Use one of {', '.join(_FREQS)}."
        )
    if "COUNT" in seen and "UNTIL" in seen:
        raise RecurrenceProblem(
            "an RRULE may not have both COUNT and UNTIL", "Keep one of them (RFC 5545)."
        )


def check_recurrence(lines: list[str]) -> list[tuple[int, RecurrenceProblem]]:
    """Every problem in a `recurrence` list, as `(index, problem)` pairs (empty when valid)."""
    problems: list[tuple[int, RecurrenceProblem]] = []
    for i, line in enumerate(lines):
        try:
            name = re.split(r"[;:]", line, maxsplit=1)[0].upper()
            if name not in _NAMES:
                if "FREQ=" in line.upper():
                    raise RecurrenceProblem(
                        f"{line!r} lacks the 'RRULE:' prefix", f"Write 'RRULE:{line}'."
                    )
                raise RecurrenceProblem(
                    f"{line!r} is not a recurrence line",
                    "Each line starts with RRULE:, EXRULE:, RDATE or EXDATE, "
                    "e.g. RRULE:FREQ=WEEKLY;BYDAY=MO.",
                )
            if name in ("RRULE", "EXRULE"):
                _check_rrule_body(line.split(":", 1)[1] if ":" in line else "")
            _parse((line,), datetime(2026, 1, 5, 9, tzinfo=UTC), "UTC", False)
        except RecurrenceProblem as problem:
            problems.append((i, problem))
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            problems.append(
                (i, RecurrenceProblem(f"{line!r}: {exc}", "See RFC 5545, e.g. RRULE:FREQ=WEEKLY."))
            )
    return problems


def _normalise_until(line: str, tz_name: str, all_day: bool) -> str:
    """dateutil wants UNTIL in UTC for zoned series and floating for all-day ones."""

    def fix(m: re.Match[str]) -> str:
        day, time_part, z = m.group(1), m.group(2), m.group(3)
        if all_day:
            if time_part and z:
                moment = datetime.strptime(day + time_part, "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
                return "UNTIL=" + moment.astimezone(zone(tz_name)).strftime("%Y%m%d")
            return "UNTIL=" + day
        if z:
            return m.group(0)
        local = datetime.strptime(day + (time_part or "T235959"), "%Y%m%dT%H%M%S")
        moment = local.replace(tzinfo=zone(tz_name)).astimezone(UTC)
        return "UNTIL=" + moment.strftime("%Y%m%dT%H%M%SZ")

    return _UNTIL.sub(fix, line) if line.upper().startswith(("RRULE", "EXRULE")) else line


def _parse(lines: tuple[str, ...], dtstart: datetime, tz_name: str, all_day: bool):  # type: ignore[no-untyped-def]
    text = "\n".join(_normalise_until(line, tz_name, all_day) for line in lines)
    return rrulestr(text, dtstart=dtstart, forceset=True, unfold=True, tzids=lambda n: zone(n))


@functools.lru_cache(maxsize=512)
def occurrence_starts(
    lines: tuple[str, ...], local_start: str, tz_name: str, all_day: bool
) -> tuple[datetime | date, ...]:
    """Original starts of a series: aware UTC datetimes, or dates for all-day series.

    `local_start` is the master's start as local wall time (`2026-03-02T10:00:00`) or a date
    (`2026-03-02`). Expansion stops after `MAX_INSTANCES` or five years past the first start.
    """
    if all_day:
        first = datetime.fromisoformat(local_start)
        rules = _parse(lines, first, tz_name, True)
        end = first + HORIZON
    else:
        first = datetime.fromisoformat(local_start).replace(tzinfo=zone(tz_name))
        rules = _parse(lines, first, tz_name, False)
        end = first + HORIZON
    out: list[datetime | date] = []
    for occ in rules:
        if occ > end or len(out) >= MAX_INSTANCES:
            break
        out.append(occ.date() if all_day else occ.astimezone(UTC))
    return tuple(out)


def instance_suffix(original_start: datetime | date) -> str:
    """`20260302T150000Z` for a timed original start, `20260302` for an all-day one."""
    if isinstance(original_start, datetime):
        return original_start.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return original_start.strftime("%Y%m%d")


def split_instance_id(event_id: str) -> tuple[str, datetime | date] | None:
    """`(master_id, original_start)` for an instance id, `None` for any other id."""
    m = _SUFFIX.match(event_id)
    if not m:
        return None
    stamp = m.group("stamp")
    try:
        if "T" in stamp:
            return m.group("master"), datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        return m.group("master"), datetime.strptime(stamp, "%Y%m%d").date()
    except ValueError:
        return None
