"""How the naive baseline turns a task's entity references into values, the way the phrasing
allows and no smarter.

- **explicit** phrasing: the prompt states ids, emails and RFC 3339 times, so those are used as
  given (an entity without a true id, such as an ambiguous "Alex", is still looked up by name);
- **natural** phrasing: names and wall times only —
  - a calendar: the *first* entry of `calendarList_list` whose name contains the entity's name or
    is contained in it (so "Marketing (Archive)" finds the live "Marketing" first);
  - a person: the *first* user or group `directory_search(name)` returns ("Alex" is Alex Kim);
  - an event: the *first* match of `events_list(q=name)` on its calendar (for one occurrence of a
    series, the first one from now on);
  - a time: the wall time without an offset (`2026-03-10T09:00:00`), which the calendar rejects —
    the naive agent then retries once with the error's `example`, in whatever zone that quotes;
- a free slot: `freebusy_query` over the window for the resolved people, then the first gap long
  enough;
- a time the request defines by another event (`of`: "at the same time as", "right after"): that
  event is resolved as above, read with `events_get`, and its start or end (plus `minutes`) used.

`exact_times=True` (the `first-match` agent) models an agent that gets clock arithmetic right
but never verifies an entity: stated times are used with their true offset, and only the
entity look-ups are first-match.

Every lookup is a real tool call, so the classifier and the step limit see it.

Example:
    >>> free_slot([("2026-03-05T14:00:00Z", "2026-03-05T15:00:00Z")],
    ...           "2026-03-05T14:00:00Z", "2026-03-05T18:00:00Z", 30)
    '2026-03-05T15:00:00Z'
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from datetime import timedelta
from typing import Any

from calendar_gym.agents.common import call, outcome
from calendar_gym.agents.retry import fixed_arguments
from calendar_gym.tasks.model import Entity, Phrasing, Task
from calendar_gym.tasks.values import instant
from calendar_gym.world.timeutil import format_utc_z
from mcpgym.types import Observation, StepResult

__all__ = ["Lookup", "Unresolved", "free_slot"]

Calls = Generator[dict[str, Any], StepResult[Observation], Any]


class Unresolved(Exception):
    """An entity the naive agent could not find (it then gives up on the task)."""


def free_slot(busy: list[tuple[str, str]], lo: str, hi: str, minutes: int) -> str | None:
    """The start (UTC, `Z`) of the first gap of `minutes` in [lo, hi) outside `busy`."""
    start, end = instant(lo), instant(hi)
    if start is None or end is None:
        return None
    need = timedelta(minutes=minutes)
    spans = sorted((instant(a), instant(b)) for a, b in busy)
    cursor = start
    for a, b in spans:
        if a is None or b is None or b <= cursor:
            continue
        if a - cursor >= need:
            break
        cursor = max(cursor, b)
    return format_utc_z(cursor) if cursor + need <= end else None


def _names_match(name: str, candidate: str) -> bool:
    a, b = name.casefold().strip(), candidate.casefold().strip()
    return bool(a and b) and (a in b or b in a)


class Lookup:
    """Resolves entity references for one naive episode (lookups are cached per entity)."""

    def __init__(
        self, task: Task, phrasing: Phrasing, now: str, *, exact_times: bool = False
    ) -> None:
        self.task = task
        self.phrasing = phrasing
        self.now = now
        self.exact_times = exact_times
        self.cache: dict[str, Any] = {}
        self.calendars: list[dict[str, Any]] | None = None

    def value(self, ref: str) -> Calls:
        """The naive value of entity reference `key` or `key.end`; raises `Unresolved`."""
        key, _, attr = ref.partition(".")
        if key not in self.cache:
            self.cache[key] = yield from self._entity(self.task.entities[key])
        found = self.cache[key]
        if attr == "end":
            entity = self.task.entities[key]
            begin = instant(found)
            if begin is None:
                raise Unresolved(f"{key} has no usable start")
            return format_utc_z(begin + timedelta(minutes=entity.minutes or 0))
        return found

    def _entity(self, entity: Entity) -> Calls:
        given = entity.value if entity.kind in ("time", "slot") else entity.id
        if entity.kind == "time" and entity.of is not None:
            return (yield from self._derived(entity))
        if entity.kind == "time":
            if self.phrasing == "explicit" or self.exact_times:
                return entity.value
            return entity.local or (entity.value or "")[:19]
        if entity.kind == "slot":
            return (yield from self._slot(entity))
        if self.phrasing == "explicit" and given is not None:
            return given
        name = entity.name or ""
        if entity.kind == "calendar":
            return (yield from self._calendar(name))
        if entity.kind == "person":
            return (yield from self._person(name))
        return (yield from self._event(entity))

    def _ref(self, raw: str) -> Calls:
        """An entity key, or a literal id / email."""
        if raw in self.task.entities:
            return (yield from self.value(raw))
        return raw

    def _calendar(self, name: str) -> Calls:
        if self.calendars is None:
            result = yield call("calendarList_list", {})
            value, error = outcome(result)
            self.calendars = [] if error else list((value or {}).get("items", []))
        for entry in self.calendars:
            shown = entry.get("summaryOverride") or entry.get("summary") or ""
            if _names_match(name, shown) or _names_match(name, entry.get("summary") or ""):
                return entry["id"]
        raise Unresolved(f"no calendar named like {name!r}")

    def _person(self, name: str) -> Calls:
        result = yield call("directory_search", {"query": name})
        value, error = outcome(result)
        found = [] if error else [*value.get("users", []), *value.get("groups", [])]
        if not found:
            raise Unresolved(f"nobody called {name!r}")
        return found[0]["email"]

    def _event(self, entity: Entity) -> Calls:
        calendar = yield from self._ref(entity.calendar or "primary")
        args: dict[str, Any] = {"calendarId": calendar, "q": entity.name or "", "maxResults": 10}
        if entity.instance:
            args.update(singleEvents=True, orderBy="startTime", timeMin=self.now)
        result = yield call("events_list", args)
        value, error = outcome(result)
        items = (
            [] if error else [i for i in value.get("items", []) if i.get("status") != "cancelled"]
        )
        if not items:
            raise Unresolved(f"no event like {entity.name!r}")
        return items[0]["id"]

    def _derived(self, entity: Entity) -> Calls:
        """The start or end of another event (read with `events_get`), plus `minutes`."""
        of = self.task.entities[entity.of or ""]
        event_id = yield from self.value(entity.of or "")
        calendar = yield from self._ref(of.calendar or "primary")
        result = yield call("events_get", {"calendarId": calendar, "eventId": event_id})
        value, error = outcome(result)
        if error is not None:
            raise Unresolved(f"could not read {of.name!r}")
        edge = value.get(entity.edge) or {}
        if "date" in edge:
            return edge["date"]
        moment = instant(edge.get("dateTime"))
        if moment is None:
            raise Unresolved(f"{of.name!r} has no {entity.edge} time")
        return format_utc_z(moment + timedelta(minutes=entity.minutes or 0))

    def _slot(self, entity: Entity) -> Calls:
        people = []
        for raw in entity.people:
            people.append((yield from self._ref(raw)))
        lo, hi = entity.window
        if self.phrasing == "natural" and not self.exact_times:
            lo, hi = lo[:19], hi[:19]
        args: dict[str, Any] = {"timeMin": lo, "timeMax": hi, "items": [{"id": p} for p in people]}
        result = yield call("freebusy_query", args)
        value, error = outcome(result)
        if error is not None:
            retry = fixed_arguments(args, error)
            if retry is None:
                raise Unresolved("free/busy query failed")
            args = retry
            result = yield call("freebusy_query", args)
            value, error = outcome(result)
            if error is not None:
                raise Unresolved("free/busy query failed twice")
        calendars: Mapping[str, Any] = value.get("calendars", {})
        busy = [(b["start"], b["end"]) for c in calendars.values() for b in c.get("busy", [])]
        slot = free_slot(busy, args["timeMin"], args["timeMax"], entity.minutes or 30)
        if slot is None:
            raise Unresolved("no free slot in the window")
        return slot
