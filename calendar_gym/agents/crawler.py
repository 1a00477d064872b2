"""`CrawlerAgent`: solves each task's natural phrasing from what the tools reveal, never from gold.

The oracle plays gold ids, so its 100 % proves nothing about whether a natural prompt can be
solved. The crawler is the proof (suite v3): it plays the task's literal request (the writes the
prompt asks for, as entity references) and resolves every entity the way a careful agent would —
by look-ups, narrowed by what the prompt says (`Entity.clue`), never by `Entity.id`:

- a calendar: `calendarList_list(showHidden=true)`, the entries whose own or list name equals
  the entity's name (`clue.name` may give a fuller name or `$icontains`, e.g. "(5F)" for "the
  5th-floor Boardroom"); with `clue.owner`, `acl_list` of each and the one whose owner that is;
- a person or group: `directory_search(name)`, then the records matching the clue's fields
  (`title`, `domain`, `name`, `kind: group`);
- an event: `events_list(q=name)` on its calendar (`clue.calendars`: on every calendar of
  those names), within `clue.day` (the local day the prompt states) and, for one occurrence,
  expanded (`singleEvents`);
- a time the prompt states: its value; a time defined by another event: read with `events_get`;
  a free slot: `freebusy_query` and the first gap.

The outcome follows what it found: no candidate → `cannot_complete`; several →
`needs_clarification`; a write refused for permission, scope or a missing entity →
`cannot_complete`; a local time the clocks skip → `needs_clarification`; otherwise `done`.
Tests hold it to full marks on every natural task (`tests/calendar/test_validity_v3.py`),
which is the suite's solvability proof.

Example:
    >>> CrawlerAgent().name
    'crawler'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from calendar_gym.agents.common import Play, PlayEpisode, call, outcome, task_of
from calendar_gym.agents.lookup import Calls, Lookup, Unresolved
from calendar_gym.agents.naive import substitute
from calendar_gym.tasks.model import Entity, Task
from calendar_gym.tasks.values import matches
from calendar_gym.world.seed import USERS
from calendar_gym.world.timeutil import date_start_instant, format_in_zone
from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = ["Ambiguous", "CrawlLookup", "CrawlerAgent", "crawl_play"]

_REFUSED = {"PERMISSION_DENIED", "INSUFFICIENT_SCOPE", "NOT_FOUND", "FORBIDDEN_OPERATION"}


class Ambiguous(Unresolved):
    """Several candidates fit everything the prompt says."""


def _zone_of(user: str) -> str:
    return next((u["time_zone"] for u in USERS if u["email"] == user), "UTC")


def _fits(record: Mapping[str, Any], clue: Mapping[str, Any], user: str) -> bool:
    for key, want in clue.items():
        if key == "kind":
            if (want == "group") != ("members" in record):
                return False
        elif not matches(want, record.get(key), user=user):
            return False
    return True


def _one(found: list[Any], what: str) -> Any:
    if not found:
        raise Unresolved(f"no {what}")
    if len(found) > 1:
        raise Ambiguous(f"{len(found)} candidates for {what}")
    return found[0]


class CrawlLookup(Lookup):
    """Entity resolution from look-ups and clues (see the module docstring)."""

    def __init__(self, task: Task, now: str) -> None:
        super().__init__(task, "natural", now, exact_times=True)
        self.zone = _zone_of(task.user)

    def value(self, ref: str) -> Calls:
        """As `Lookup.value`; a calendar the prompt does not name is where its event was found."""
        key = ref.partition(".")[0]
        entity = self.task.entities[key]
        if entity.kind == "calendar" and entity.name is None and key not in self.cache:
            for other, e in self.task.entities.items():
                if e.kind == "event" and e.calendar == key:
                    yield from super().value(other)
        return (yield from super().value(ref))

    def _entity(self, entity: Entity) -> Calls:
        if entity.kind == "calendar":
            return (yield from self._crawl_calendar(entity.name or "", entity.clue))
        if entity.kind == "person":
            return (yield from self._crawl_person(entity))
        if entity.kind == "event":
            return (yield from self._crawl_event(entity))
        return (yield from super()._entity(entity))

    def _listed(self) -> Calls:
        if self.calendars is None:
            args: dict[str, Any] = {"showHidden": True, "maxResults": 250}
            value, error = outcome((yield call("calendarList_list", args)))
            self.calendars = [] if error else list((value or {}).get("items", []))
        return self.calendars

    def _crawl_calendar(self, name: str, clue: Mapping[str, Any]) -> Calls:
        entries = yield from self._listed()
        want = clue.get("name", name)
        found = [
            e for e in entries
            if matches(want, e.get("summaryOverride") or e.get("summary") or "")
            or matches(want, e.get("summary") or "")
        ]  # fmt: skip
        owner = clue.get("owner")
        if owner is not None:
            owned = []
            for entry in found:
                value, error = outcome((yield call("acl_list", {"calendarId": entry["id"]})))
                rules = [] if error else (value or {}).get("items", [])
                if any(r.get("role") == "owner" and matches(owner, (r.get("scope") or {})
                       .get("value")) for r in rules):  # fmt: skip
                    owned.append(entry)
            found = owned
        return _one(found, f"calendar {name!r}")["id"]

    def _crawl_person(self, entity: Entity) -> Calls:
        value, error = outcome((yield call("directory_search", {"query": entity.name or ""})))
        records = [] if error else [*value.get("users", []), *value.get("groups", [])]
        found = [r for r in records if _fits(r, entity.clue, self.task.user)]
        return _one(found, f"person {entity.name!r}")["email"]

    def _window(self, day: str) -> dict[str, str]:
        start = date_start_instant(date.fromisoformat(day), self.zone)
        end = date_start_instant(date.fromisoformat(day) + timedelta(days=1), self.zone)
        return {
            "timeMin": format_in_zone(start, self.zone),
            "timeMax": format_in_zone(end, self.zone),
        }

    def _crawl_event(self, entity: Entity) -> Calls:
        clue = entity.clue
        names = clue.get("calendars")
        if names:
            calendars = []
            entries = yield from self._listed()
            for n in names:
                calendars += [e["id"] for e in entries if matches(n, e.get("summary") or "")]
        else:
            calendars = [(yield from self._ref(entity.calendar or "primary"))]
        found = []
        for calendar in calendars:
            args: dict[str, Any] = {"calendarId": calendar, "q": entity.name or ""}
            if entity.instance:
                args["singleEvents"] = True
            if "day" in clue:
                args.update(self._window(clue["day"]))
            elif "days" in clue:
                first, last = clue["days"]
                args.update(timeMin=self._window(first)["timeMin"],
                            timeMax=self._window(last)["timeMax"])  # fmt: skip
            value, error = outcome((yield call("events_list", args)))
            items = [] if error else value.get("items", [])
            found += [
                (i["id"], calendar) for i in items
                if i.get("status") != "cancelled"
                and matches({"$icontains": clue.get("title", entity.name or "")}, i.get("summary"))
            ]  # fmt: skip
        event, calendar = _one(found, f"event {entity.name!r}")
        if names and entity.calendar in self.task.entities:
            self.cache[entity.calendar] = calendar  # where the search found it
        return event


def _emails_only(args: dict[str, Any]) -> dict[str, Any]:
    """Attendees copied from another event keep only their emails (the rest is read-only)."""
    people = args.get("attendees")
    if isinstance(people, list):
        args = {**args, "attendees": [{"email": p["email"]} if isinstance(p, Mapping) and
                                      "email" in p else p for p in people]}  # fmt: skip
    return args


def crawl_play(
    task: Task, first: StepResult[Observation], *, lookup: CrawlLookup | None = None
) -> Play:
    """The crawler's episode of `task`'s natural phrasing (see the module docstring)."""
    now = str(first.observation.metadata.get("now") or task.now)
    lookup = lookup or CrawlLookup(task, now)
    results: dict[str, Any] = {}
    status, summary = "done", "Done."
    for step in task.literal_request():
        try:
            args = yield from substitute(step.args, lookup, results)
        except Ambiguous as why:
            status, summary = "needs_clarification", f"Which one? {why}."
            break
        except Unresolved as why:
            status, summary = "cannot_complete", f"Not found: {why}."
            break
        result = yield call(step.tool, _emails_only(args))
        value, error = outcome(result)
        if result.done:
            return
        if error is not None:
            code = (error.get("error") or {}).get("code")
            status = "cannot_complete" if code in _REFUSED else "needs_clarification"
            summary = f"{step.tool}: {error.get('message')}"
            break
        results[step.id] = value
    yield call("finish", {"status": status, "summary": summary})


class CrawlerAgent:
    """Plays the natural phrasing from look-ups and clues alone (see the module docstring)."""

    name = "crawler"

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> PlayEpisode:
        task, _ = task_of(spec)

        def make(first: StepResult[Observation]) -> Play:
            return crawl_play(task, first)

        return PlayEpisode(make)
