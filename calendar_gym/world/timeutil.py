"""Time for Calendar Gym: RFC 3339 parsing, IANA zones, UTC storage and offset-bearing output.

Instants are stored as UTC strings (`2026-03-05T15:00:00Z`, sortable as text) next to the IANA
zone they were given in; every time returned to an agent carries an explicit offset, computed with
`zoneinfo` for that very instant, so daylight-saving changes are always right.

Example:
    >>> inst = parse_event_datetime("2026-03-05T10:00:00", "America/New_York")
    >>> to_utc_text(inst)
    '2026-03-05T15:00:00Z'
    >>> format_in_zone(inst, "Europe/London")
    '2026-03-05T15:00:00+00:00'
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

__all__ = [
    "LooseDateTime",
    "TimeError",
    "date_start_instant",
    "format_in_zone",
    "format_utc_z",
    "is_valid_zone",
    "loose_parse",
    "offset_text",
    "parse_date",
    "parse_event_datetime",
    "parse_rfc3339",
    "parse_utc_text",
    "suggest_zone",
    "to_utc_text",
    "zone",
]

_STRICT = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$"
)
_LOOSE = re.compile(
    r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ]+(\d{1,2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?"
    r"\s*(Z|z|UTC|[+-]\d{2}:?\d{2}|[+-]\d{2})?\s*$"
)
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_ZONE_ALIASES = {
    "est": "America/New_York",
    "edt": "America/New_York",
    "eastern": "America/New_York",
    "et": "America/New_York",
    "cst": "America/Chicago",
    "cdt": "America/Chicago",
    "central": "America/Chicago",
    "mst": "America/Denver",
    "pst": "America/Los_Angeles",
    "pdt": "America/Los_Angeles",
    "pacific": "America/Los_Angeles",
    "pt": "America/Los_Angeles",
    "bst": "Europe/London",
    "gmt": "Europe/London",
    "cet": "Europe/Berlin",
    "cest": "Europe/Berlin",
    "jst": "Asia/Tokyo",
    "japan": "Asia/Tokyo",
    "tokio": "Asia/Tokyo",
    "central european": "Europe/Berlin",
    "british": "Europe/London",
    "utc": "UTC",
    "zulu": "UTC",
}


class TimeError(ValueError):
    """A time value an agent gave could not be used; `kind` says why.

    Kinds: `format` (not RFC 3339), `no_offset` (local time without a zone), `date_only`
    (a date where a date-time is needed), `zone` (unknown time zone), `gap` (the local time
    does not exist because clocks jump forward), `range` (impossible calendar values).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@functools.lru_cache(maxsize=256)
def zone(name: str) -> ZoneInfo:
    """The `ZoneInfo` for an IANA name; `TimeError(kind="zone")` when unknown."""
    if not name or name != name.strip() or name.startswith("/") or ".." in name:
        raise TimeError("zone", f"{name!r} is not an IANA time zone")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise TimeError("zone", f"{name!r} is not an IANA time zone") from None


def is_valid_zone(name: str) -> bool:
    """Whether `name` is a known IANA time zone."""
    try:
        zone(name)
    except TimeError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _all_zones() -> tuple[str, ...]:
    return tuple(sorted(available_timezones()))


def suggest_zone(name: str) -> str | None:
    """The IANA zone an agent most likely meant by `name` (e.g. `EST`, `New York`)."""
    import difflib

    key = re.sub(r"\s+(standard|daylight)?\s*time$", "", name.strip().lower())
    if key in _ZONE_ALIASES:
        return _ZONE_ALIASES[key]
    wanted = key.replace(" ", "_")
    zones = _all_zones()
    for z in zones:
        if z.lower() == wanted or z.lower().rsplit("/", 1)[-1] == wanted:
            return z
    canonical = [z for z in zones if "/" in z and not z.startswith(("US/", "Etc/", "SystemV/"))]
    near = difflib.get_close_matches(name.replace(" ", "_"), canonical, n=1, cutoff=0.6)
    return near[0] if near else None


@dataclass(frozen=True, slots=True)
class LooseDateTime:
    """What a tolerant reading of a date-time string found (used to build corrections)."""

    local: datetime  # naive wall time
    offset: timedelta | None
    has_time: bool

    def rfc3339(self, offset: timedelta | None = None) -> str:
        """This value as strict RFC 3339 (with `offset` if it had none)."""
        off = self.offset if self.offset is not None else offset
        text = self.local.strftime("%Y-%m-%dT%H:%M:%S")
        return text + (offset_text(off) if off is not None else "")


def offset_text(off: timedelta) -> str:
    """`-05:00` for a UTC offset of minus five hours (`Z` is never used here)."""
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _offset(text: str | None) -> timedelta | None:
    if text is None:
        return None
    if text.upper() in ("Z", "UTC"):
        return timedelta(0)
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 23 or minutes > 59:
        raise TimeError("format", f"offset {text!r} is out of range")
    return sign * timedelta(hours=hours, minutes=minutes)


def loose_parse(text: str) -> LooseDateTime | None:
    """Read near-RFC 3339 spellings (space separator, no seconds, `+0500`); `None` if hopeless."""
    m = _LOOSE.match(text)
    if not m:
        return None
    y, mo, d, h, mi, s, _frac, off = m.groups()
    try:
        local = datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
        return LooseDateTime(local, _offset(off), h is not None)
    except (ValueError, TimeError):
        return None


def parse_rfc3339(text: str) -> datetime:
    """Parse a strict RFC 3339 date-time that has an offset; returns an aware UTC datetime.

    Raises `TimeError` with kind `date_only`, `no_offset` or `format`.
    """
    m = _STRICT.match(text)
    if not m:
        if _DATE.match(text):
            raise TimeError(
                "date_only", f"{text!r} is a date; a date-time with an offset is needed"
            )
        raise TimeError("format", f"{text!r} is not an RFC 3339 date-time")
    y, mo, d, h, mi, s, _frac, off = m.groups()
    if off is None:
        raise TimeError("no_offset", f"{text!r} has no UTC offset")
    try:
        local = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s))
    except ValueError as exc:
        raise TimeError("range", f"{text!r}: {exc}") from None
    offset = _offset(off)
    assert offset is not None
    return local.replace(tzinfo=timezone(offset)).astimezone(UTC)


def parse_event_datetime(text: str, tz_name: str | None) -> datetime:
    """An event's `dateTime`: RFC 3339 with an offset, or a local time interpreted in `tz_name`.

    Returns an aware UTC datetime. A local time that does not exist in the zone (the hour skipped
    when clocks go forward) raises `TimeError(kind="gap")`; an ambiguous one (clocks go back)
    means its first occurrence, as Google Calendar does.
    """
    try:
        return parse_rfc3339(text)
    except TimeError as err:
        if err.kind != "no_offset":
            raise
    if tz_name is None:
        raise TimeError("no_offset", f"{text!r} has no UTC offset and no timeZone was given")
    tz = zone(tz_name)
    m = _STRICT.match(text)
    assert m is not None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    local = datetime(y, mo, d, h, mi, s)
    aware = local.replace(tzinfo=tz, fold=0)
    back = aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None)
    if back != local:
        raise TimeError(
            "gap",
            f"{text} does not exist in {tz_name}: clocks skip that hour "
            f"(daylight-saving time starts that day)",
        )
    return aware.astimezone(UTC)


def parse_date(text: str) -> date:
    """A `YYYY-MM-DD` date (all-day events); `TimeError(kind="format")` otherwise."""
    m = _DATE.match(text)
    if not m:
        raise TimeError("format", f"{text!r} is not a YYYY-MM-DD date")
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError as exc:
        raise TimeError("range", f"{text!r}: {exc}") from None


def _seconds(moment: datetime) -> str:
    # isoformat is several times cheaper than strftime, and listings format thousands of times
    return moment.replace(tzinfo=None, microsecond=0).isoformat()


def to_utc_text(instant: datetime) -> str:
    """The storage form of an instant: `2026-03-05T15:00:00Z`."""
    return _seconds(instant.astimezone(UTC)) + "Z"


def parse_utc_text(text: str) -> datetime:
    """Inverse of `to_utc_text`."""
    return datetime.fromisoformat(text)  # Python 3.11 reads the trailing Z as UTC


def format_in_zone(instant: datetime, tz_name: str | None) -> str:
    """RFC 3339 with the offset `tz_name` has at that instant (`Z` for UTC)."""
    if tz_name in (None, "UTC", "Etc/UTC"):
        return format_utc_z(instant)
    local = instant.astimezone(zone(tz_name))
    off = local.utcoffset() or timedelta(0)
    return _seconds(local) + offset_text(off)


def format_utc_z(instant: datetime) -> str:
    """RFC 3339 in UTC with a `Z`."""
    return _seconds(instant.astimezone(UTC)) + "Z"


def date_start_instant(day: date, tz_name: str) -> datetime:
    """The instant a calendar day starts in a zone (all-day events occupy whole local days)."""
    return datetime(day.year, day.month, day.day, tzinfo=zone(tz_name)).astimezone(UTC)


def offset_for(tz_name: str, local: datetime) -> timedelta:
    """The UTC offset of `tz_name` at a (naive) local time."""
    return local.replace(tzinfo=zone(tz_name)).utcoffset() or timedelta(0)
