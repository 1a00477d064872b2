"""The task suite's data model: what one Calendar Gym task is, validated by pydantic.

A task is data (JSON under `calendar_gym/tasks/v<N>/`), never code:

- who acts (`user`, `scopes`), when (`now`, the frozen current time) and in which world
  (`seed_patch`, added to the seed world);
- **two phrasings** of the same request: `explicit` (ids and RFC 3339 times) and `natural`
  (names and relative dates);
- `entities`: the people, calendars, events, times and free slots the request is about, each with
  its true value and the name the natural phrasing uses (agents and the classifier resolve
  `{"$e": "name"}` references through them);
- the gold `plan`: a dependency graph of tool calls (`after`) whose arguments are also the
  matchers the failure classifier aligns agent calls with; `{"$from": "step.path"}` reads an
  earlier step's result (e.g. the id of a calendar the plan created);
- `request`: the literal request as write steps (default: the plan's write steps), which is what a
  model that never questions the request would do; baseline agents play it;
- `assertions` over the final state, the `allowed_writes`, the expected `finish` status and the
  step limit.

Example:
    >>> step = Step(id="s1", tool="events_list", args={"calendarId": "primary"})
    >>> step.writes, Step(id="s2", tool="events_insert", args={}).writes
    (False, True)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "READ_TOOLS",
    "Assertion",
    "CountAssertion",
    "Entity",
    "Evidence",
    "ExistsAssertion",
    "FieldAssertion",
    "FinishStatus",
    "Phrasing",
    "Step",
    "Task",
    "Tier",
    "UnchangedAssertion",
    "WritePattern",
]

Tier = Literal["T1", "T2", "T3", "T4"]
FinishStatus = Literal["done", "cannot_complete", "needs_clarification"]
Phrasing = Literal["explicit", "natural"]
Table = Literal["events", "calendars", "acl", "calendar_list", "settings"]

READ_TOOLS = frozenset(
    {
        "calendarList_list",
        "calendarList_get",
        "calendars_get",
        "events_list",
        "events_get",
        "events_instances",
        "acl_list",
        "acl_get",
        "freebusy_query",
        "colors_get",
        "settings_list",
        "settings_get",
        "directory_search",
    }
)
"""Tools that never change the world (`finish` is neither a read nor a write)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Entity(_Model):
    """Something the request refers to, with its true value and how the natural phrasing names it.

    Kinds and fields:
        calendar: `id`, `name` (a calendar's title or the user's own name for it).
        person: `id` (email), `name` (what the natural phrasing calls them, e.g. "Alex").
        event: `id` (or an instance id), `name` (words of its title), `calendar` (an entity key
            or a calendar id), `instance` (one occurrence of a recurring event).
        time: `value` (RFC 3339 with offset); `local` is the wall time the natural phrasing
            states (default: `value` without its offset). `of` (an event entity key) and
            `edge` (`start` or `end`) mark a time neither phrasing states: it is that event's
            start or end, which the agent must look up (suite v2).
        slot: `value` (the start of the first free slot, RFC 3339), `people` (entity keys or
            emails), `window` (two RFC 3339 bounds), `minutes`; `{"$e": "slot.end"}` is its end.
    `id: null` means the entity has no single true value (an ambiguous "Alex"), or that it does not
    exist at all (then `name` is still what the request calls it).
    """

    kind: Literal["calendar", "person", "event", "time", "slot"]
    id: str | None = None
    name: str | None = None
    value: str | None = None
    local: str | None = None
    calendar: str | None = None
    instance: bool = False
    people: list[str] = Field(default_factory=list)
    window: list[str] = Field(default_factory=list)
    minutes: int | None = None
    of: str | None = None
    edge: Literal["start", "end"] = "start"
    clue: dict[str, Any] = Field(default_factory=dict)
    """What the natural phrasing says that tells the right candidate apart, as matchers over a
    look-up's record (suite v3; e.g. `{"title": {"$icontains": "finance"}}` for "Dana from
    Finance", `{"day": "2026-03-05"}` for an event "tomorrow"). The crawling oracle resolves
    entities from look-ups and these clues alone, never from `id`."""

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Entity:
        if self.kind in ("time", "slot") and not self.value:
            raise ValueError(f"a {self.kind} entity needs a value")
        if self.kind in ("calendar", "person", "event") and not (self.id or self.name):
            raise ValueError(f"a {self.kind} entity needs an id or a name")
        if self.kind == "slot" and (len(self.window) != 2 or not self.people or not self.minutes):
            raise ValueError("a slot entity needs people, a two-bound window and minutes")
        if self.kind == "event" and not self.calendar:
            raise ValueError("an event entity needs its calendar")
        return self


class Step(_Model):
    """One call of the gold plan.

    Attributes:
        id: unique within the task; other steps name it in `after` and `$from`.
        tool: the tool to call.
        args: the arguments (values may be `{"$e": key}` or `{"$from": "step.path"}`).
        after: steps that must come first.
        match: the argument keys the classifier compares (default: every key of `args` for
            writes; the identifying keys for reads, see `classify`).
        expect_error: the error code this call must get (e.g. `PERMISSION_DENIED` in a trap).
    """

    id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    after: list[str] = Field(default_factory=list)
    match: list[str] | None = None
    expect_error: str | None = None
    established_by: list[Evidence] = Field(default_factory=list)
    """Reads that establish the fact `expect_error` reports (suite v3): the refused attempt is
    one way to find out, never the only one (a careful agent looks first)."""

    @property
    def writes(self) -> bool:
        """Whether the tool can change the world."""
        return self.tool not in READ_TOOLS and self.tool != "finish"


class Evidence(_Model):
    """A call a trap episode must contain before its outcome earns credit (suite v2).

    A blind agent that finishes at once must not pass a trap, so each trap names what shows the
    agent found out: a call of one of `tools` whose arguments match `args` (compared like the
    grader compares values, keys not named are free), that got the error `error` (the refused
    write, the `NOT_FOUND` of a missing event); without `error` and `min_found` any such call
    counts (it was looked for) — or, with `min_found`, successful lookups of
    those tools that together listed at least that many distinct candidates whose name contains
    `named` (the two people called Alex).
    """

    name: str = ""
    tools: list[str] = Field(default_factory=list)
    args: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    min_found: int = 0
    named: str | None = None
    shows: dict[str, Any] | None = None
    """A successful call whose result (or one of its `items`) matches this (suite v3): the read
    that shows a fact, e.g. `{"id": ..., "accessRole": "reader"}` for a read-only calendar."""
    any_of: list[Evidence] = Field(default_factory=list)
    """Alternatives (suite v3): the rule holds when any of them does. A trap's refused attempt
    and the read that establishes the same fact are alternatives, never both required."""

    @model_validator(mode="after")
    def _tools_or_alternatives(self) -> Evidence:
        if not self.tools and not self.any_of:
            raise ValueError("evidence needs tools or any_of alternatives")
        return self


class WritePattern(_Model):
    """Changes the task allows: rows of `table` matching `where` (before or after the change)."""

    table: Table
    where: dict[str, Any] = Field(default_factory=dict)
    ops: list[Literal["insert", "update", "delete"]] = Field(
        default_factory=lambda: ["insert", "update", "delete"]
    )


class _AssertionBase(_Model):
    name: str = ""
    goal: bool = True
    """A goal is what the task asks for; at least one goal must newly hold for any credit."""


class ExistsAssertion(_AssertionBase):
    """At least `min` rows of `table` match `where` in the final state."""

    type: Literal["exists"] = "exists"
    table: Table
    where: dict[str, Any]
    min: int = 1


class CountAssertion(_AssertionBase):
    """Exactly `count` rows of `table` match `where` in the final state."""

    type: Literal["count"] = "count"
    table: Table
    where: dict[str, Any]
    count: int


class FieldAssertion(_AssertionBase):
    """The row of `table` with primary key `key` exists and its fields match `equals`."""

    type: Literal["field"] = "field"
    table: Table
    key: dict[str, Any]
    equals: dict[str, Any]


class UnchangedAssertion(_AssertionBase):
    """Every seed row of `table` matching `where` is still there, unchanged (a guard)."""

    type: Literal["unchanged"] = "unchanged"
    table: Table
    where: dict[str, Any]
    goal: bool = False


Assertion = Annotated[
    ExistsAssertion | CountAssertion | FieldAssertion | UnchangedAssertion,
    Field(discriminator="type"),
]


class Task(_Model):
    """One task of the suite (see the module docstring)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    tier: Tier
    kind: str
    title: str
    user: str = "alice@acme.test"
    scopes: list[str] = Field(default_factory=lambda: ["calendar"])
    now: str = "2026-03-04T09:00:00-05:00"
    seed_patch: dict[str, Any] | None = None
    prompts: dict[Phrasing, str]
    entities: dict[str, Entity] = Field(default_factory=dict)
    plan: list[Step]
    request: list[Step] | None = None
    assertions: list[Assertion] = Field(default_factory=list)
    allowed_writes: list[WritePattern] = Field(default_factory=list)
    finish: FinishStatus = "done"
    max_steps: int = Field(default=12, ge=2, le=60)
    suite: str = "1"
    """The suite version the task belongs to (set by the loader)."""
    evidence: list[Evidence] = Field(default_factory=list)
    """What a trap episode must show (suite v2; every plan step with `expect_error` adds one)."""
    twin: str | None = None
    """The near-identical task with the opposite outcome (a trap's solvable twin), if any."""

    @property
    def is_trap(self) -> bool:
        """A task whose right outcome is to stop without writing (not `done`)."""
        return self.finish != "done"

    def required_evidence(self) -> list[Evidence]:
        """The evidence a trap must show: `evidence` plus one per step expecting an error (its
        tool, that error, its identifying arguments). Suite v1 asks for none (reproducible);
        from suite v3 each step's rule is any-of: the refused attempt *or* one of the reads in
        its `established_by` (a careful agent that looks first is never marked down)."""
        if self.suite == "1" or not self.is_trap:
            return []
        out = list(self.evidence)
        for s in self.plan:
            if s.expect_error is None:
                continue
            keys = [k for k in ("calendarId", "eventId", "ruleId") if k in s.args]
            tried = Evidence(name=f"tried {s.tool} and got {s.expect_error}",
                             tools=[s.tool], args={k: s.args[k] for k in keys},
                             error=s.expect_error)  # fmt: skip
            if self.suite == "2":
                out.append(tried)
            else:
                name = f"tried {s.tool} or read the fact that refuses it"
                out.append(Evidence(name=name, any_of=[tried, *s.established_by]))
        return out

    def step(self, step_id: str) -> Step:
        """The plan step `step_id`."""
        for s in self.plan:
            if s.id == step_id:
                return s
        raise KeyError(step_id)

    def literal_request(self) -> list[Step]:
        """The steps a literal-minded agent would take: `request`, else the plan's writes."""
        if self.request is not None:
            return list(self.request)
        return [s for s in self.plan if s.writes]

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if set(self.prompts) != {"explicit", "natural"}:
            raise ValueError("a task needs both an explicit and a natural prompt")
        ids = [s.id for s in self.plan]
        if len(set(ids)) != len(ids):
            raise ValueError(f"{self.id}: duplicate step ids")
        seen: set[str] = set()
        for s in self.plan:
            missing = [a for a in s.after if a not in seen]
            if missing:
                raise ValueError(f"{self.id}: step {s.id} comes after unknown or later {missing}")
            seen.add(s.id)
        last = self.plan[-1] if self.plan else None
        if last is None or last.tool != "finish" or last.args.get("status") != self.finish:
            raise ValueError(f"{self.id}: the plan must end with finish(status={self.finish!r})")
        if self.is_trap and self.allowed_writes:
            raise ValueError(f"{self.id}: a trap task allows no writes")
        return self


Step.model_rebuild()  # `established_by` names Evidence, defined after Step
