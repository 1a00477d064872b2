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


# RFC 5545 §3.3.10 value ranges (INTERVAL and COUNT are positive; an INTERVAL of 0 would
# never advance, so it is refused, and one above 1,000 is no calendar's); a negative BY value
# counts from the end, 0 is none
_RANGES = {
    "INTERVAL": (1, 1000),
    "COUNT": (1, 10**9),
    "BYSECOND": (0, 59),
    "BYMINUTE": (0, 59),
    "BYHOUR": (0, 23),
    "BYMONTHDAY": (-31, 31),
    "BYYEARDAY": (-366, 366),
    "BYWEEKNO": (-53, 53),
    "BYMONTH": (1, 12),
    "BYSETPOS": (-366, 366),
}
_SIGNED = {"BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYSETPOS"}


_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# 2001-2028: every kind of year (its first weekday, leap or not) once at least, no century
_PROBE_DAYS = [date(2001, 1, 1) + timedelta(days=n) for n in range(28 * 365 + 7)]


def _ints(value: str | None) -> set[int] | None:
    return None if value is None else {int(v) for v in value.split(",")}


def _ever_matches(seen: dict[str, str]) -> bool:
    """Whether some day of some year passes the rule's day filters (BYMONTH, BYMONTHDAY,
    BYYEARDAY, BYWEEKNO, BYDAY's weekdays): dateutil searches to the year 9999 for a rule
    that never matches (seconds on the event loop at every expansion), so such a rule is
    refused up front. Days are tried over 28 years that hold every kind of year."""
    keys = {k: seen.get(k) for k in ("BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYDAY")}
    if all(v is None for v in keys.values()):
        return True
    months, monthdays = _ints(keys["BYMONTH"]), _ints(keys["BYMONTHDAY"])
    yeardays, weeknos = _ints(keys["BYYEARDAY"]), _ints(keys["BYWEEKNO"])
    weekdays = None
    if keys["BYDAY"] is not None:
        weekdays = {
            _WEEKDAYS.index(d.strip()[-2:].upper())
            for d in keys["BYDAY"].split(",")
            if d.strip()[-2:].upper() in _WEEKDAYS
        }
    for day in _PROBE_DAYS:
        if months is not None and day.month not in months:
            continue
        if weekdays is not None and day.weekday() not in weekdays:
            continue
        if monthdays is not None:
            last = (date(day.year + day.month // 12, day.month % 12 + 1, 1) - timedelta(days=1)).day
            if day.day not in monthdays and day.day - last - 1 not in monthdays:
                continue
        if yeardays is not None:
            length = 366 if date(day.year, 12, 31).timetuple().tm_yday == 366 else 365
            nth = day.timetuple().tm_yday
            if nth not in yeardays and nth - length - 1 not in yeardays:
                continue
        if weeknos is not None:
            iso = day.isocalendar()
            week, weeks = iso.week, date(iso.year, 12, 28).isocalendar().week
            if week not in weeknos and week - weeks - 1 not in weeknos:
                continue
        return True
    return False


def _check_numbers(key: str, value: str, low: int, high: int) -> None:
    """Each comma-separated value of `key` an integer within [low, high] (0 excluded where the
    value may be negative)."""
    many = key.startswith("BY")
    items = value.split(",") if many else [value]
    for item in items:
        text = item.strip()
        body = text[1:] if text[:1] in "+-" and key in _SIGNED else text
        if not (body.isascii() and body.isdigit()) or len(body) > 10:
            raise RecurrenceProblem(
                f"{key}={value[:40]} is not {'a list of integers' if many else 'an integer'}",
                f"Write {key}={low if low > 0 else 1}" + (",2" if many else "") + ".",
            )
        number = int(text)
        if not low <= number <= high or (number == 0 and key in _SIGNED):
            raise RecurrenceProblem(
                f"{key}={number} is out of range",
                f"{key} takes {low}..{high}" + (" (not 0)" if key in _SIGNED else "") + ".",
            )


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
    for key, (low, high) in _RANGES.items():
        if key in seen:
            _check_numbers(key, seen[key], low, high)
    if "COUNT" in seen and "UNTIL" in seen:
        raise RecurrenceProblem(
            "an RRULE may not have both COUNT and UNTIL", "Keep one of them (RFC 5545)."
        )
    interval = int(seen.get("INTERVAL", "1"))
    if seen["FREQ"].upper() == "DAILY" and interval % 7 == 0 and "BYDAY" in seen:
        raise RecurrenceProblem(
            f"FREQ=DAILY;INTERVAL={interval} lands on the start's weekday only, so BYDAY "
            "can match nothing else (and a search for it never ends)",
            f"Write FREQ=WEEKLY;INTERVAL={interval // 7};BYDAY=... instead.",
        )
    if not _ever_matches(seen):
        raise RecurrenceProblem(
            "this RRULE's BY parts match no day of any year (e.g. BYMONTH=2;BYMONTHDAY=30)",
            "Pick days that exist: check BYMONTH against BYMONTHDAY, BYYEARDAY and BYWEEKNO.",
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
