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
sets without the acting user, case-insensitive strings); a summary may add words to the requested
one (lenient titles, as the assertions are); a recurrence compares as a set of rules whose parts
are sets (`BYDAY=MO,TU` equals `BYDAY=TU,MO`); an event's `start_tz`/`end_tz` count only on a
recurring event (elsewhere the instant is what matters).

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

from typing import Any

from calendar_gym.tasks.snapshot import KEYS, Row, Snapshot
from calendar_gym.tasks.values import matches

__all__ = ["FREE_ON_INSERT", "FREE_ON_OVERRIDE", "collateral", "field_equal"]

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
        out.add((head, parts))
    return out


def field_equal(
    name: str, want: Any, got: Any, *, user: str, row: Row | None = None, zone: str | None = None
) -> bool:
    """Whether field `name` of a touched row is as requested (`want`: the reference value;
    `zone`: the time zone of the row's calendar)."""
    if name == "summary" and isinstance(want, str) and isinstance(got, str):
        return want.strip().casefold() in got.strip().casefold()
    if name == "recurrence":
        return _rrule_parts(want) == _rrule_parts(got)
    if name in ("start_tz", "end_tz") and row is not None and not row.get("recurrence"):
        return got in (want, None, zone)  # a single event's instant is what counts
    if want in (None, "", [], {}) and got in (None, "", [], {}):
        return True
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return want == got
    return matches(want, got, user=user)


def _wrong_fields(
    want: Row, got: Row, user: str, free: frozenset[str], zone: str | None = None
) -> list[str]:
    names = sorted((set(want) | set(got)) - free)
    return [
        n
        for n in names
        if not field_equal(n, want.get(n), got.get(n), user=user, row=want, zone=zone)
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
                wrong = _wrong_fields(want, new, user, frozenset(), zone)
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
            free = FREE_ON_OVERRIDE if new.get("recurring_event_id") else FREE_ON_INSERT
            wrong = _wrong_fields(match, new, user, free, zone)
            if wrong:
                problems.append(f"{_label(table, key)}: {', '.join(wrong)}")
    return problems
