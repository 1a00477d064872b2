"""Reference agents that bound the benchmark: the floor (`null`, `random`) and what not verifying
costs (`first-match`), beside the ceiling (`oracle`) and the baseline (`naive`).

- `null` finishes at once, calling no tool, with one fixed status (`null-done`,
  `null-cannot-complete`, `null-needs-clarification`; plain `null` uses `cannot_complete`). On
  suite v2 it passes no trap: a trap needs evidence that the agent found out.
- `random` makes 1-8 calls of random tools with random but well-typed arguments (seed ids,
  times, roles from the world), then finishes with a random status. Seeded by the episode id,
  so it is reproducible.
- `first-match` resolves every name by the first hit (`calendarList_list`, `directory_search`,
  `events_list(q=...)`) and never checks it; it gets clock arithmetic right (times with their
  true offsets) and never retries. Its explicit-vs-natural gap is what ambiguity costs.

Example:
    >>> NullAgent("needs_clarification").name
    'null-needs-clarification'
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from calendar_gym.agents.common import Play, PlayEpisode, call, task_of
from calendar_gym.agents.naive import naive_play
from calendar_gym.world.seed import CALENDAR_IDS, EVENT_IDS, USERS
from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = ["STATUSES", "FirstMatchAgent", "NullAgent", "RandomAgent"]

STATUSES = ("done", "cannot_complete", "needs_clarification")


class NullAgent:
    """Finishes at once with `status`, calling no tool."""

    def __init__(self, status: str = "cannot_complete", *, name: str | None = None) -> None:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
        self.status = status
        self.name = name or f"null-{status.replace('_', '-')}"

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> PlayEpisode:
        status = self.status

        def make(first: StepResult[Observation]) -> Play:
            yield call("finish", {"status": status, "summary": "Finished without looking."})

        return PlayEpisode(make)


class FirstMatchAgent:
    """Uses the first hit of every look-up, never verifies (see the module docstring)."""

    name = "first-match"

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> PlayEpisode:
        task, phrasing = task_of(spec)

        def make(first: StepResult[Observation]) -> Play:
            return naive_play(task, phrasing, first, exact_times=True, retry=False)

        return PlayEpisode(make)


_TIMES = [f"2026-03-{d:02d}T{h:02d}:00:00-05:00" for d in (5, 6, 9, 10, 12) for h in (9, 11, 14)]
_WORDS = ["Sync", "Review", "Lunch", "Planning", "Standup", "Call"]


def _value(rng: random.Random, name: str, schema: dict[str, Any]) -> Any:
    """A random, well-typed value for argument `name` (None: leave the argument out)."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    pools: dict[str, list[Any]] = {
        "calendarId": ["primary", *CALENDAR_IDS.values()],
        "destination": ["primary", *CALENDAR_IDS.values()],
        "eventId": list(EVENT_IDS.values()),
        "summary": _WORDS,
        "query": [u["name"].split()[0] for u in USERS],
        "q": _WORDS,
        "role": ["reader", "writer", "owner", "freeBusyReader"],
        "status": list(STATUSES),
        "timeMin": _TIMES,
        "timeMax": _TIMES,
        "colorId": [str(i) for i in range(1, 12)],
    }
    if name in pools:
        return rng.choice(pools[name])
    if name in ("start", "end"):
        return {"dateTime": rng.choice(_TIMES)}
    if name == "scope":
        return {"type": "user", "value": rng.choice(USERS)["email"]}
    if name == "attendees":
        return [{"email": rng.choice(USERS)["email"]}]
    if name == "items":
        return [{"id": rng.choice(USERS)["email"]}]
    if schema.get("type") == "boolean":
        return rng.random() < 0.5
    return None


class RandomAgent:
    """Random tools, random arguments, random finish (see the module docstring)."""

    name = "random"

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> PlayEpisode:
        rng = random.Random(hashlib.sha256(f"random/{spec.id}".encode()).digest())
        usable = [t for t in tools if t.name != "finish"]

        def make(first: StepResult[Observation]) -> Play:
            for _ in range(rng.randint(1, 8)):
                if not usable:
                    break
                tool = rng.choice(usable)
                props: dict[str, Any] = (tool.input_schema or {}).get("properties", {})
                args = {}
                for name, schema in props.items():
                    value = _value(rng, name, schema if isinstance(schema, dict) else {})
                    if value is not None and (rng.random() < 0.8):
                        args[name] = value
                result = yield call(tool.name, args)
                if result.done:
                    return
            yield call("finish", {"status": rng.choice(STATUSES), "summary": "Random."})

        return PlayEpisode(make)
