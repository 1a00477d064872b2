"""The collateral-damage guard (suite v3): every touched row must be what the request asked for.

`allowed_writes` names the rows a task may change and the assertions check the fields it asks
about; neither sees an unrequested change *to the same row* (moving and renaming the meeting while
adding a guest, truncating a series to three occurrences, inviting outside guests, creating a
calendar in the wrong zone). This guard compares, field by field, every row the episode touched
with the **reference final state** — the state the gold plan reaches from the same seed:

- an updated row must equal the reference row on every field (a field the request does not
  mention is therefore unchanged from the seed: "unchanged except");
- an inserted row must equal one inserted reference row of its table on every field but the
  `FREE_ON_INSERT` ones (generated ids, notes, reminders, colors derived from the id), so a
  created event has exactly the requested attendees, times, recurrence and title;
- a deleted row must be deleted in the reference too.

Values compare as the grader compares (`calendar_gym.tasks.values.matches`: instants, emails as
sets without the acting user, case-insensitive strings) and JSON columns exactly; a summary may
add words to a requested title (lenient titles, as the assertions are), but a title the request
leaves alone must stay exactly as it was; a recurrence compares as a set of rules whose parts are
sets (`BYDAY=MO,TU` equals `BYDAY=TU,MO`) without RFC 5545's defaults (`INTERVAL=1`, `WKST=MO`);
guests compare with their replies and `optional` flags (the acting user's own entry only as a
decline), and a guest the row had before keeps their display name; an event's
`start_tz`/`end_tz` count only on a recurring event (elsewhere the instant is what matters), and
two names of one zone (`US/Eastern`, `America/New_York`) are the same zone.

Example:
    >>> seed = {"events": {("c", "e"): {"calendar_id": "c", "id": "e", "summary": "Sync",
    ...                                  "start": "2026-03-05T15:00:00Z"}}}
    >>> ref = {"events": {("c", "e"): {**seed["events"][("c", "e")], "summary": "Team sync"}}}
    >>> moved = {"events": {("c", "e"): {**ref["events"][("c", "e")],
    ...                                   "start": "2026-03-05T16:00:00Z"}}}
    >>> collateral(seed, ref, ref, user="a@x"), collateral(seed, moved, ref, user="a@x")
    ([], ['events c/e: start'])
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from calendar_gym.tasks.snapshot import KEYS, Row, Snapshot
from calendar_gym.tasks.values import matches

__all__ = ["FREE_ON_INSERT", "FREE_ON_OVERRIDE", "collateral", "field_equal", "same_zone"]

FREE_ON_INSERT = frozenset(
    {"id", "rule_id", "calendar_id", "description", "reminders", "extended", "location",
     "color_id", "background_color", "foreground_color", "default_reminders", "guest_options",
     "selected", "creator", "organizer"}
)  # fmt: skip
"""Fields a created row may set as the agent likes (ids are generated; notes, reminders and
colors harm nobody). Every other field of a created row must be the requested value."""
FREE_ON_OVERRIDE = FREE_ON_INSERT - {"description", "location", "extended", "color_id"}
"""An instance override (a row with `recurring_event_id`: one occurrence of a series moved or
changed) is not a new event: it carries the series' notes and place, so adding or changing them
is an unrequested change like any other; only its generated fields are free."""


_RRULE_DEFAULTS = {("INTERVAL", frozenset({"1"})), ("WKST", frozenset({"MO"}))}
"""RFC 5545's defaults: a rule that spells them out is the same rule."""


def _rrule_parts(lines: Any) -> Any:
    if not isinstance(lines, list):
        return lines
    out = set()
    for line in lines:
        if not isinstance(line, str):
            return lines
        head, _, body = line.strip().upper().partition(":")
        parts = frozenset(
            (k, frozenset(v.split(","))) for k, _, v in (p.partition("=") for p in body.split(";"))
        )
        out.add((head, parts - _RRULE_DEFAULTS))
    return out


@lru_cache(maxsize=256)
def same_zone(a: str, b: str) -> bool:
    """Whether IANA zones `a` and `b` keep the same clock from 2020 to 2040 (`US/Eastern` is
    `America/New_York`): a series in either lands on the same instants."""
    if a == b:
        return True
    try:
        za, zb = ZoneInfo(a), ZoneInfo(b)
    except (ValueError, ZoneInfoNotFoundError):
        return False
    at = datetime(2020, 1, 1, tzinfo=UTC)
    while at.year < 2040:
        if at.astimezone(za).utcoffset() != at.astimezone(zb).utcoffset():
            return False
        at += timedelta(hours=6)
    return True


def _guests(value: Any, user: str, named: set[str]) -> Any:
    """Each guest as `[email, reply, optional]`, with the display name of those in `named` (an
    existing guest's name is theirs; a new guest's is the agent's). The acting user counts only
    as a decline (listing oneself or not is a matter of style; declining frees one's time)."""
    if not isinstance(value, list):
        return value
    out = []
    for g in value:
        if not isinstance(g, list) or len(g) < 4:
            return value
        if g[0] == user.lower():
            if g[1] == "declined":
                out.append(g[:2])
        else:
            out.append(g[:3] + ([g[3]] if g[0] in named else []))
    return sorted(out)


def field_equal(
    name: str,
    want: Any,
    got: Any,
    *,
    user: str,
    row: Row | None = None,
    zone: str | None = None,
    seed: Row | None = None,
) -> bool:
    """Whether field `name` of a touched row is as requested (`want`: the reference value;
    `zone`: the time zone of the row's calendar; `seed`: the row before the episode, when it
    existed — a title the request leaves as it was must stay exactly so)."""
    if name == "summary" and isinstance(want, str) and isinstance(got, str):
        if seed is not None and seed.get("summary") == want:
            return want.strip() == got.strip()  # not asked: no words added, no case changed
        return want.strip().casefold() in got.strip().casefold()
    if name == "recurrence":
        return _rrule_parts(want) == _rrule_parts(got)
    if name == "guests":
        named = {g[0] for g in (seed or {}).get("guests") or [] if isinstance(g, list) and g}
        return _guests(want, user, named) == _guests(got, user, named)
    if name in ("start_tz", "end_tz"):
        if row is not None and not row.get("recurrence"):
            return got in (want, None, zone) or (  # a single event's instant is what counts
                isinstance(got, str) and isinstance(want, str) and same_zone(want, got)
            )
        if isinstance(want, str) and isinstance(got, str):
            return same_zone(want, got)
    if want in (None, "", [], {}) and got in (None, "", [], {}):
        return True
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return want == got
    if isinstance(want, dict) or isinstance(got, dict):
        return want == got  # a JSON column (reminders, properties): no key added or dropped
    return matches(want, got, user=user)


def _wrong_fields(
    want: Row,
    got: Row,
    user: str,
    free: frozenset[str],
    zone: str | None = None,
    seed: Row | None = None,
) -> list[str]:
    names = sorted((set(want) | set(got)) - free)
    return [
        n
        for n in names
        if not field_equal(n, want.get(n), got.get(n), user=user, row=want, zone=zone, seed=seed)
    ]


def _zone(state: Snapshot, row: Row) -> str | None:
    cal = state.get("calendars", {}).get((str(row.get("calendar_id")),))
    return cal.get("time_zone") if cal else None


def _label(table: str, key: tuple[str, ...]) -> str:
    return f"{table} {'/'.join(key)}"


def collateral(seed: Snapshot, final: Snapshot, reference: Snapshot, *, user: str) -> list[str]:
    """What the episode changed beyond the request: one text per wrong row (`table key: fields`);
    empty when every touched row is as the reference final state has it."""
    problems: list[str] = []
    for table in KEYS:
        before, after, ref = seed.get(table, {}), final.get(table, {}), reference.get(table, {})
        free_refs = [r for k, r in ref.items() if k not in before]  # the requested inserts
        for key in sorted(set(before) | set(after)):
            old, new = before.get(key), after.get(key)
            if old == new:
                continue
            zone = _zone(final, new or old or {})
            if new is None:  # deleted
                if key in ref:
                    problems.append(f"{_label(table, key)}: deleted")
                continue
            if old is not None:  # updated
                want = ref.get(key)
                if want is None:
                    problems.append(f"{_label(table, key)}: changed, the request deletes it")
                    continue
                wrong = _wrong_fields(want, new, user, frozenset(), zone, seed=old)
                if wrong:
                    problems.append(f"{_label(table, key)}: {', '.join(wrong)}")
                continue
            if key in ref and key not in before:  # inserted under the reference's own key
                match = ref[key]
            else:
                scored = [(len(_wrong_fields(r, new, user, FREE_ON_INSERT)), i)
                          for i, r in enumerate(free_refs)]  # fmt: skip
                if not scored:
                    problems.append(f"{_label(table, key)}: created, the request creates none")
                    continue
                match = free_refs[min(scored)[1]]
            if match in free_refs:
                free_refs.remove(match)
            series = new.get("recurring_event_id")
            free = FREE_ON_OVERRIDE if series else FREE_ON_INSERT
            master = before.get((str(new.get("calendar_id")), str(series))) if series else None
            wrong = _wrong_fields(match, new, user, free, zone, seed=master)
            if wrong:
                problems.append(f"{_label(table, key)}: {', '.join(wrong)}")
    return problems
