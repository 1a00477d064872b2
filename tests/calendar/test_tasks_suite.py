"""The task suite is valid data: every task loads, its phrasings differ in the right ways, its
gold plan calls real tools with schema-valid arguments, its assertions ask for a change, its
free slots are really the first free ones, and nothing depends on the wall clock."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.agents.lookup import free_slot
from calendar_gym.tasks import Step, SuiteError, Task, expand_ids, load_suite
from calendar_gym.tasks.grading import held_on_seed
from calendar_gym.tasks.loader import VERSIONS
from calendar_gym.tasks.snapshot import snapshot
from calendar_gym.tasks.values import ANY, entity_value, instant, resolve
from calendar_gym.tools.validation import check_arguments
from calendar_gym.world.store import Store
from mcpgym import CallToolAction

SUITE = load_suite()
TASKS = [t for version in VERSIONS for t in load_suite(version)]
IDS = [f"v{t.suite}/{t.id}" for t in TASKS]
ROOT = Path(__file__).resolve().parents[2]

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def _refs(value: Any) -> set[str]:
    """Entity keys referenced by `$e` in `value`."""
    if isinstance(value, dict):
        if "$e" in value and len(value) == 1:
            return {str(value["$e"]).split(".")[0]}
        return set().union(*(_refs(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_refs(v) for v in value)) if value else set()
    return set()


def _plan_refs(task: Task) -> set[str]:
    found = _refs([s.args for s in task.plan])
    found |= _refs([a.model_dump() for a in task.assertions])
    for key in list(found):  # an event names its calendar, a slot its people
        entity = task.entities[key]
        found |= {k for k in [entity.calendar, *entity.people] if k in task.entities}
    return found


def test_the_suite_has_at_least_48_tasks_across_four_tiers() -> None:
    tiers = Counter(t.tier for t in SUITE)
    assert len(SUITE) >= 48
    assert sorted(tiers) == ["T1", "T2", "T3", "T4"]
    assert min(tiers.values()) >= 8, tiers
    assert len(set(IDS)) == len(IDS)
    assert len({t.id for t in SUITE}) == len(SUITE)


def test_tier_4_has_every_kind_of_trap() -> None:
    kinds = Counter(t.kind for t in TASKS if t.tier == "T4")
    for kind in ("trap_permission", "trap_ambiguity", "trap_missing", "dst"):
        assert kinds[kind] >= 3, kinds
    statuses = {t.finish for t in TASKS if t.tier == "T4"}
    assert statuses == {"done", "cannot_complete", "needs_clarification"}


def test_the_seed_worlds_near_duplicates_are_used() -> None:
    text = " ".join(t.model_dump_json() for t in TASKS)
    for needle in ("Marketing (Archive)", "Roadmap", "Alex", "Team Sync", "1:1"):
        assert needle in text, needle


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_phrasings_differ_and_say_what_they_should(task: Task) -> None:
    explicit, natural = task.prompts["explicit"], task.prompts["natural"]
    assert explicit != natural
    for key in _plan_refs(task):
        entity = task.entities[key]
        if entity.kind == "slot":
            for value in [*entity.window, *(entity_value(task, p) if p in task.entities else p
                                            for p in entity.people)]:  # fmt: skip
                assert value in explicit, f"explicit prompt lacks {value}"
            continue
        value = entity.value if entity.kind == "time" else entity.id
        if entity.of is not None:  # a look-up answer: the explicit prompt names its event
            assert value not in explicit and entity_value(task, entity.of) in explicit, key
            continue
        if value is not None and value != "primary":
            assert value in explicit, f"explicit prompt lacks {key}={value}"
        if entity.name is not None:
            assert entity.name.casefold() in natural.casefold(), f"natural lacks {entity.name!r}"
    assert "@" not in natural and "c_" not in natural, "natural phrasing names no ids"
    assert not _RFC3339.search(natural), "natural phrasing uses relative dates, not RFC 3339"


def _valid(step: Step, task: Task) -> list[Any]:
    spec = CalendarEnv.tool_specs[step.tool]

    def entity(ref: str) -> Any:
        value = entity_value(task, ref)
        return "someone@acme.test" if value is None else value

    args = resolve(step.args, entity, {})
    args = _fill(args)
    return check_arguments(spec.input_schema, args, tool=step.tool, default_tz="UTC")


def _fill(value: Any) -> Any:
    if value is ANY:
        return "c_0123456789abcdef01234567@group.calendar.google.com"
    if isinstance(value, dict):
        return {k: [{"email": "someone@acme.test"}] if k == "attendees" and v is ANY else _fill(v)
                for k, v in value.items()}  # fmt: skip
    if isinstance(value, list):
        return [_fill(v) for v in value]
    return value


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_gold_plans_call_real_tools_with_schema_valid_arguments(task: Task) -> None:
    for step in [*task.plan, *task.literal_request()]:
        assert step.tool in CalendarEnv.tool_specs, step.tool
        if step.expect_error in ("INVALID_VALUE", "INVALID_FORMAT"):
            assert _valid(step, task), f"{step.id} should be invalid ({step.expect_error})"
            continue
        problems = _valid(step, task)
        assert not problems, [(p.code, p.message) for p in problems]


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_assertions_ask_for_a_change_and_name_real_columns(task: Task) -> None:
    store = Store.create(now=task.now, seed_patch=task.seed_patch)
    try:
        seed = snapshot(store)
    finally:
        store.close()
    columns = {t: set(next(iter(rows.values()))) for t, rows in seed.items()}
    for a in task.assertions:
        fields = getattr(a, "where", None) or {**getattr(a, "key", {}), **a.model_dump().get(
            "equals", {})}  # fmt: skip
        assert set(fields) <= columns[a.table], (a.name, set(fields) - columns[a.table])
    for w in task.allowed_writes:
        assert set(w.where) <= columns[w.table], set(w.where) - columns[w.table]
    held = held_on_seed(task, seed)
    goals = [h for a, h in zip(task.assertions, held, strict=True) if a.goal]
    assert not any(goals), "a goal that already holds would reward doing nothing"
    if task.is_trap:
        assert not task.allowed_writes
    else:
        assert goals and task.allowed_writes


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_step_limits_leave_room_for_the_plan(task: Task) -> None:
    assert task.max_steps >= len(task.plan) + 3


SLOT_TASKS = [t for t in TASKS if any(e.kind == "slot" for e in t.entities.values())]


@pytest.mark.parametrize("task", SLOT_TASKS, ids=[t.id for t in SLOT_TASKS])
def test_slot_values_are_the_first_common_free_slot(task: Task) -> None:
    env = CalendarEnv()
    env.reset(task=task.id)
    try:
        for entity in (e for e in task.entities.values() if e.kind == "slot"):
            people = [entity_value(task, p) if p in task.entities else p for p in entity.people]
            obs = env.step(CallToolAction(tool_name="freebusy_query", arguments={
                "timeMin": entity.window[0], "timeMax": entity.window[1],
                "items": [{"id": p} for p in people]}))  # fmt: skip
            assert obs.error is None, obs.error
            busy = [(b["start"], b["end"]) for cal in obs.result["calendars"].values()
                    for b in cal["busy"]]  # fmt: skip
            assert all("errors" not in cal for cal in obs.result["calendars"].values())
            found = free_slot(busy, entity.window[0], entity.window[1], entity.minutes or 0)
            assert found is not None and instant(found) == instant(entity.value)
    finally:
        env.close()


def test_placeholders_expand_to_seed_ids_and_unknown_keys_fail() -> None:
    assert expand_ids("{cal:hiring}/{event:doctor}").startswith("c_")
    with pytest.raises(SuiteError, match="unknown cal key"):
        expand_ids({"x": "{cal:nope}"})


def test_unknown_suite_version_is_an_error() -> None:
    with pytest.raises(SuiteError, match="no task suite version"):
        load_suite("999")
    with pytest.raises(KeyError, match="no task"):
        SUITE.get("t9-nope")


def test_task_model_rejects_inconsistent_tasks() -> None:
    base = TASKS[0].model_dump()
    with pytest.raises(ValueError, match="must end with finish"):
        Task.model_validate({**base, "plan": base["plan"][:-1]})
    with pytest.raises(ValueError, match="explicit and a natural"):
        Task.model_validate({**base, "prompts": {"explicit": "x"}})
    with pytest.raises(ValueError, match="after unknown or later"):
        Task.model_validate({**base, "plan": [{**base["plan"][0], "after": ["finish"]},
                                              base["plan"][1]]})  # fmt: skip


_CLOCK = {("datetime", "now"), ("datetime", "today"), ("date", "today"), ("time", "time")}


def test_grading_and_agents_never_read_the_wall_clock() -> None:
    """Tasks carry their own frozen "now": the suite passes in any week."""
    folders = [ROOT / "calendar_gym" / "tasks", ROOT / "calendar_gym" / "agents"]
    files = [p for f in folders for p in f.rglob("*.py")]
    files += [ROOT / "calendar_gym" / "suite.py"]  # grading and classify live in tasks/
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert (node.value.id, node.attr) not in _CLOCK, f"{path.name} reads the clock"
