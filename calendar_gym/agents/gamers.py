"""Gamers: agents that try to score without solving, each a class of shortcut the suite must
not reward (suite v3's validity properties; `calendar_gym.bench.validity` runs them all).

- `pick-first`, `pick-second`, `pick-last` — positional pickers: the literal request with every
  name resolved by one fixed position among the look-up's name matches, in the order the tool
  returns them (no `orderBy`), never verified (exact times, no retry). Suite v3 varies the
  gold's position per task and seed.
- `blind-done`, `blind-cannot-complete`, `blind-needs-clarification` — status-blind: try the
  request (first match, ignoring every error), then finish with one fixed status.
- `replay` — plays the gold plan of *another* task of the same kind (same template, other ids).
- `error-exploit` — sends each write of the request with no arguments, then follows what the
  errors suggest (their `example`s), three times at most; `done` if a write got through.
- `fixed-offset` — first match with every stated time written at the UTC offset in force at
  the frozen "now" (what an agent that never recomputes the offset does across a clock change);
  `crawler-fixed-offset` — the crawler's careful look-ups with that clock, so what it loses is
  what the clock alone costs (every post-DST free slot, suite v3).
- `look-then-guess` — reads the world, then guesses: first match, but before each write it
  reads the target's `accessRole` (`calendarList_get`) and, for an existing event, the event
  (`events_get`); a role short of the write (owner for the ACL, writer otherwise), a read error
  or a name without a match → `cannot_complete` without writing; otherwise it writes and
  says `done` whatever happened. What a "careful-looking" agent earns without disambiguating.
- `ask-if-two` — first match, but `needs_clarification` the moment a look-up lists two or more
  name matches (a look-up with several candidates is what an ambiguity trap's evidence asks
  for); otherwise the request, then `done` whatever happened.

Each is a `make(task, phrasing, first) -> Play` in `GAMERS` and an agent class for the runner.

Example:
    >>> sorted(GAMERS)[:3]
    ['ask-if-two', 'blind-cannot-complete', 'blind-done']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from calendar_gym.agents.common import Play, PlayEpisode, call, outcome, task_of
from calendar_gym.agents.crawler import CrawlLookup, crawl_play
from calendar_gym.agents.lookup import Calls, Lookup, Unresolved, _names_match
from calendar_gym.agents.naive import naive_play, substitute
from calendar_gym.agents.retry import fixed_arguments
from calendar_gym.tasks.loader import load_suite
from calendar_gym.tasks.model import Entity, Phrasing, Step, Task
from calendar_gym.tasks.reference import plan_play
from calendar_gym.tasks.values import instant
from calendar_gym.world.seed import USERS
from calendar_gym.world.timeutil import format_in_zone, offset_for, parse_rfc3339
from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = ["GAMERS", "GamerAgent", "PickLookup"]

Make = Callable[[Task, Phrasing, StepResult[Observation]], Play]


class PickLookup(Lookup):
    """First-match resolution, but taking the `index`-th name match (`-1`: the last)."""

    def __init__(self, task: Task, phrasing: Phrasing, now: str, index: int) -> None:
        super().__init__(task, phrasing, now, exact_times=True)
        self.index = index

    def _pick(self, items: list[Any], what: str) -> Any:
        if not items:
            raise Unresolved(f"no {what}")
        return items[self.index] if -len(items) <= self.index < len(items) else items[-1]

    def _calendar(self, name: str) -> Calls:
        if self.calendars is None:
            value, error = outcome((yield call("calendarList_list", {})))
            self.calendars = [] if error else list((value or {}).get("items", []))
        hits = [
            e for e in self.calendars
            if _names_match(name, e.get("summaryOverride") or e.get("summary") or "")
            or _names_match(name, e.get("summary") or "")
        ]  # fmt: skip
        return self._pick(hits, f"calendar {name!r}")["id"]

    def _person(self, name: str) -> Calls:
        value, error = outcome((yield call("directory_search", {"query": name})))
        found = [] if error else [*value.get("users", []), *value.get("groups", [])]
        return self._pick(found, f"person {name!r}")["email"]

    def _event(self, entity: Entity) -> Calls:
        calendar = yield from self._ref(entity.calendar or "primary")
        args: dict[str, Any] = {"calendarId": calendar, "q": entity.name or "", "maxResults": 10}
        if entity.instance:  # the occurrences in the order the look-up gives them
            args.update(singleEvents=True, timeMin=self.now)
        value, error = outcome((yield call("events_list", args)))
        items = (
            [] if error else [i for i in value.get("items", []) if i.get("status") != "cancelled"]
        )
        return self._pick(items, f"event {entity.name!r}")["id"]


def _zone(task: Task) -> str:
    return next((u["time_zone"] for u in USERS if u["email"] == task.user), "UTC")


class _FixedOffsetTimes(Lookup):
    """Stated times keep their wall clock but take the UTC offset in force at the frozen "now"
    (the natural phrasing only: the explicit one states each offset, which is copied)."""

    def _offset(self) -> str:
        zone = _zone(self.task)
        local = parse_rfc3339(format_in_zone(parse_rfc3339(self.task.now), zone))
        off = offset_for(zone, local.replace(tzinfo=None))
        minutes = int(abs(off.total_seconds()) // 60)
        sign = "-" if off.total_seconds() < 0 else "+"
        return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"

    def _fixed(self, value: str | None) -> str | None:
        if value is None or instant(value) is None or len(value) < 19:
            return value
        return value[:19] + self._offset()

    def _entity(self, entity: Entity) -> Calls:
        if self.phrasing == "explicit":
            return (yield from super()._entity(entity))
        if entity.kind == "time" and entity.of is None:
            return self._fixed(entity.value)
        if entity.kind == "slot":
            shifted = entity.model_copy(update={"window": [self._fixed(w) for w in entity.window]})
            return (yield from self._slot(shifted))
        return (yield from super()._entity(entity))


class FixedOffsetLookup(_FixedOffsetTimes, PickLookup):
    """First match, with the fixed-offset clock."""

    def __init__(self, task: Task, phrasing: Phrasing, now: str) -> None:
        PickLookup.__init__(self, task, phrasing, now, 0)


class FixedOffsetCrawl(_FixedOffsetTimes, CrawlLookup):
    """The crawler's careful look-ups, with the fixed-offset clock: what only the clock costs."""


def _positional(index: int) -> Make:
    def make(task: Task, phrasing: Phrasing, first: StepResult[Observation]) -> Play:
        now = str(first.observation.metadata.get("now") or task.now)
        lookup = PickLookup(task, phrasing, now, index)
        return naive_play(task, phrasing, first, exact_times=True, retry=False, lookup=lookup)

    return make


def _fixed_offset(task: Task, phrasing: Phrasing, first: StepResult[Observation]) -> Play:
    now = str(first.observation.metadata.get("now") or task.now)
    lookup = FixedOffsetLookup(task, phrasing, now)
    return naive_play(task, phrasing, first, exact_times=True, retry=False, lookup=lookup)


def _crawl_fixed_offset(task: Task, phrasing: Phrasing, first: StepResult[Observation]) -> Play:
    now = str(first.observation.metadata.get("now") or task.now)
    return crawl_play(task, first, lookup=FixedOffsetCrawl(task, now))


class _CountingLookup(PickLookup):
    """First match that remembers how many name matches each look-up listed."""

    def __init__(self, task: Task, phrasing: Phrasing, now: str) -> None:
        super().__init__(task, phrasing, now, 0)
        self.hits: list[int] = []

    def _pick(self, items: list[Any], what: str) -> Any:
        self.hits.append(len(items))
        return super()._pick(items, what)


_ACL_TOOLS = frozenset({"acl_insert", "acl_patch", "acl_update", "acl_delete"})
Check = Callable[[Step, dict[str, Any], _CountingLookup], Calls]
"""Before a request step: a status to finish with at once (the gamer's guess), or None."""


def _read_first(step: Step, args: dict[str, Any], lookup: _CountingLookup) -> Calls:
    """`cannot_complete` when the target's role is short of the write or the event is
    unreadable (look-then-guess)."""
    calendar = args.get("calendarId")
    if not step.writes or not isinstance(calendar, str):
        return None
    value, error = outcome((yield call("calendarList_get", {"calendarId": calendar})))
    role = (value or {}).get("accessRole") if error is None else None
    if role not in (("owner",) if step.tool in _ACL_TOOLS else ("owner", "writer")):
        return "cannot_complete"
    if isinstance(args.get("eventId"), str) and step.tool != "events_insert":
        got = {"calendarId": calendar, "eventId": args["eventId"]}
        if outcome((yield call("events_get", got)))[1] is not None:
            return "cannot_complete"
    return None


def _two_hits(step: Step, args: dict[str, Any], lookup: _CountingLookup) -> Calls:
    """`needs_clarification` once a look-up listed two or more name matches (ask-if-two)."""
    yield from ()
    return "needs_clarification" if any(n >= 2 for n in lookup.hits) else None


def _checked(check: Check | None, unresolved: str | None, status: str = "done") -> Make:
    """First match, `check` before each request step, the request, then `status` whatever
    happened; a name without a match finishes with `unresolved` (None: skip the step)."""

    def make(task: Task, phrasing: Phrasing, first: StepResult[Observation]) -> Play:
        now = str(first.observation.metadata.get("now") or task.now)
        lookup = _CountingLookup(task, phrasing, now)
        results: dict[str, Any] = {}
        for step in task.literal_request():
            try:
                args = yield from substitute(step.args, lookup, results)
            except Unresolved:
                if unresolved is None:
                    continue
                yield call("finish", {"status": unresolved, "summary": "Not found."})
                return
            guess = (yield from check(step, args, lookup)) if check is not None else None
            if guess is not None:
                yield call("finish", {"status": guess, "summary": "Looked first."})
                return
            result = yield call(step.tool, args)
            if result.done:
                return
            value, error = outcome(result)
            if error is None:
                results[step.id] = value
        yield call("finish", {"status": status, "summary": "Tried it."})

    return make


def _blind(status: str) -> Make:
    """Try the request (first match, errors ignored), then finish with `status`."""
    return _checked(None, None, status)


def _replay(task: Task, phrasing: Phrasing, first: StepResult[Observation]) -> Play:
    suite = list(load_suite(task.suite))
    same = [t for t in suite if t.kind == task.kind and t.id != task.id]
    others = same or [t for t in suite if t.tier == task.tier and t.id != task.id]
    other = others[sum(task.id.encode()) % len(others)] if others else task
    return plan_play(other)


def _error_exploit(task: Task, phrasing: Phrasing, first: StepResult[Observation]) -> Play:
    wrote = False
    for step in task.literal_request():
        if not step.writes:
            continue
        args: dict[str, Any] = {}
        for _ in range(4):
            result = yield call(step.tool, args)
            if result.done:
                return
            _, error = outcome(result)
            if error is None:
                wrote = True
                break
            fixed = fixed_arguments(args, error)
            if fixed is None:
                break
            args = fixed
    yield call("finish", {"status": "done" if wrote else "cannot_complete", "summary": "Did it."})


GAMERS: dict[str, Make] = {
    "pick-first": _positional(0),
    "pick-second": _positional(1),
    "pick-last": _positional(-1),
    "blind-done": _blind("done"),
    "blind-cannot-complete": _blind("cannot_complete"),
    "blind-needs-clarification": _blind("needs_clarification"),
    "replay": _replay,
    "error-exploit": _error_exploit,
    "fixed-offset": _fixed_offset,
    "crawler-fixed-offset": _crawl_fixed_offset,
    "look-then-guess": _checked(_read_first, "cannot_complete"),
    "ask-if-two": _checked(_two_hits, None),
}
"""Every gamer by name (see the module docstring)."""


class GamerAgent:
    """One gamer of `GAMERS` as an agent for the evaluation runner."""

    def __init__(self, name: str) -> None:
        if name not in GAMERS:
            raise ValueError(f"unknown gamer {name!r}; known: {', '.join(sorted(GAMERS))}")
        self.name = name

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> PlayEpisode:
        task, phrasing = task_of(spec)
        make = GAMERS[self.name]

        def play(first: StepResult[Observation]) -> Play:
            return make(task, phrasing, first)

        return PlayEpisode(play)
