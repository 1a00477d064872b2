"""Suite v3's grader on solutions the gold plan does not spell: the same request carried out in an
equivalent way keeps full marks on every task, and an unrequested change hidden in an equivalent
shape loses them.

Equivalent (full marks): PUT instead of PATCH with the body `events_get`/`calendarList_get` gave
(reminders as read back, colors as read back), a recurrence that spells RFC 5545's defaults
(`INTERVAL=1`, `WKST=MO`), another name of the same zone (`US/Eastern`), re-sending the guest
list without the replies. Unrequested (below full marks): a guest's reply, `optional` flag or
name changed, one's own decline, words added to or the case changed of a title the request leaves
alone, a rule that repeats every other week.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.tasks import load_suite
from calendar_gym.tasks.model import Task
from calendar_gym.tasks.reference import plan_play
from calendar_gym.world.seed import EVENT_IDS
from mcpgym.types import CallToolAction

V3 = load_suite("3")
Rewrite = Callable[[CalendarEnv, Task, str, dict[str, Any]], tuple[str, dict[str, Any]]]

_READ_ONLY = {"kind", "etag", "id", "htmlLink", "created", "updated", "creator", "organizer",
              "iCalUID", "sequence", "recurringEventId", "originalStartTime"}  # fmt: skip
_LIST_READ_ONLY = {"summary", "description", "location", "timeZone", "accessRole", "primary",
                   "deleted"}  # fmt: skip
_PUT = {
    "events_patch": ("events_update", "events_get", ("calendarId", "eventId"), _READ_ONLY),
    "calendarList_patch": (
        "calendarList_update", "calendarList_get", ("calendarId",), _READ_ONLY | _LIST_READ_ONLY,
    ),
}  # fmt: skip


def _call(env: CalendarEnv, tool: str, args: dict[str, Any]) -> Any:
    return env.step(CallToolAction(tool_name=tool, arguments=args))


def play(task: Task, rewrite: Rewrite | None = None, seed: int = 0) -> tuple[float, list[str]]:
    """The gold plan on `task`, each call passed through `rewrite`; the reward and the failed
    assertions."""
    env = CalendarEnv()
    env.reset(task=task.id, suite="3", seed=seed)
    steps = plan_play(task)
    action = next(steps)
    try:
        while True:
            tool, args = action["tool_name"], copy.deepcopy(action["arguments"])
            if rewrite is not None and tool != "finish":
                tool, args = rewrite(env, task, tool, args)
            obs = _call(env, tool, args)
            if obs.done:
                grade = env.task_grade()
                return float(obs.reward or 0.0), [a.name for a in grade.assertions if not a.holds]
            action = steps.send(type("R", (), {"observation": obs, "done": False})())  # type: ignore[arg-type]
    finally:
        env.close()


def _walk(value: Any, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    if isinstance(value, dict):
        return fn({k: _walk(v, fn) for k, v in value.items()})
    if isinstance(value, list):
        return [_walk(v, fn) for v in value]
    return value


def put_instead_of_patch(
    env: CalendarEnv, task: Task, tool: str, args: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    if tool not in _PUT:
        return tool, args
    put, get, keys, read_only = _PUT[tool]
    read = _call(env, get, {k: args[k] for k in keys})
    if read.error is not None:
        return tool, args
    body = {k: v for k, v in read.result.items() if k not in read_only}
    if "attendees" in body:  # the replies stay out: re-sending the list must not reset them
        body["attendees"] = [{"email": g["email"]} for g in body["attendees"]]
    return put, {**body, **args}


def _rrule(extra: str) -> Rewrite:
    def rewrite(env: Any, task: Any, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        def add(d: dict[str, Any]) -> dict[str, Any]:
            if isinstance(d.get("recurrence"), list):
                d["recurrence"] = [r + extra if r.startswith("RRULE") else r
                                   for r in d["recurrence"]]  # fmt: skip
            return d

        return tool, _walk(args, add)

    return rewrite


def _zone(old: str, new: str) -> Rewrite:
    def rewrite(env: Any, task: Any, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        def swap(d: dict[str, Any]) -> dict[str, Any]:
            if d.get("timeZone") == old and "dateTime" in d:
                d["timeZone"] = new
            return d

        return tool, _walk(args, swap)

    return rewrite


def _recurring(task: Task) -> bool:
    return "recurrence" in repr([s.args for s in task.plan])


def _zoned(task: Task, zone: str) -> bool:
    return f"'timeZone': '{zone}'" in repr([s.args for s in task.plan])


@pytest.mark.parametrize(
    "name, rewrite, applies",
    [
        ("put-instead-of-patch", put_instead_of_patch,
         lambda t: any(s.tool in _PUT for s in t.plan)),
        ("rrule-interval-1", _rrule(";INTERVAL=1"), _recurring),
        ("rrule-wkst-mo", _rrule(";WKST=MO"), _recurring),
        ("zone-alias", _zone("America/New_York", "US/Eastern"),
         lambda t: _zoned(t, "America/New_York")),
    ],
)  # fmt: skip
def test_an_equivalent_solution_keeps_full_marks_on_every_task(
    name: str, rewrite: Rewrite, applies: Callable[[Task], bool]
) -> None:
    tried, lost = 0, []
    for task in V3:
        if task.is_trap or not applies(task):
            continue
        tried += 1
        reward, failed = play(task, rewrite)
        if reward < 1.0:
            lost.append((task.id, failed))
    assert tried >= 1 and lost == [], (name, tried, lost)


def test_a_series_every_other_week_or_in_another_zone_loses_full_marks() -> None:
    task = V3.get("t1-weekday-standup")
    assert play(task)[0] == 1.0
    assert play(task, _rrule(";INTERVAL=2"))[0] < 1.0
    assert play(task, _zone("America/New_York", "America/Chicago"))[0] < 1.0


def _guest_writes(task: Task) -> bool:
    return any(s.tool == "events_patch" and "attendees" in s.args for s in task.plan)


def _guests(change: Callable[[dict[str, Any], str], dict[str, Any]]) -> Rewrite:
    """A rewrite sending every guest of a patched event through `change(guest, user)`."""

    def rewrite(
        env: Any, task: Task, tool: str, args: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        if tool == "events_patch" and isinstance(args.get("attendees"), list):
            args["attendees"] = [change(dict(g), task.user) for g in args["attendees"]]
        return tool, args

    return rewrite


def _others(**fields: Any) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    return lambda g, user: g if g["email"] == user else {**g, **fields}


def _self_declines(g: dict[str, Any], user: str) -> dict[str, Any]:
    return {**g, "responseStatus": "declined"} if g["email"] == user else g


def _self_listed_declining(env: Any, task: Task, tool: str, args: dict[str, Any]) -> Any:
    tool, args = _guests(_self_declines)(env, task, tool, args)
    guests = args.get("attendees") if tool == "events_patch" else None
    if isinstance(guests, list) and all(g["email"] != task.user for g in guests):
        args["attendees"].append({"email": task.user, "responseStatus": "declined"})
    return tool, args


GUEST_TASKS = [t for t in V3 if not t.is_trap and _guest_writes(t)]


def _cases() -> Iterator[Any]:
    yield pytest.param(_guests(_others(responseStatus="declined")), id="guests-declined")
    yield pytest.param(_guests(_others(responseStatus="tentative")), id="guests-tentative")
    yield pytest.param(_guests(_others(optional=True)), id="guests-optional")
    yield pytest.param(_self_listed_declining, id="self-declines")


@pytest.mark.parametrize("rewrite", list(_cases()))
def test_a_changed_reply_or_optional_flag_loses_full_marks_on_every_guest_task(
    rewrite: Rewrite,
) -> None:
    assert len(GUEST_TASKS) >= 4, [t.id for t in GUEST_TASKS]
    kept = [t.id for t in GUEST_TASKS if play(t, rewrite)[0] == 1.0]
    assert kept == []


def test_re_sending_the_guest_list_keeps_every_reply() -> None:
    env = CalendarEnv()
    env.reset(task="t2-add-dana-quarterly", suite="3")
    event = EVENT_IDS["quarterly_planning"]
    read = _call(env, "events_get", {"calendarId": "primary", "eventId": event}).result
    replies = {g["email"]: g["responseStatus"] for g in read["attendees"]}
    answered = dict(zip(sorted(set(replies) - {"alice@acme.test"}),
                        ("declined", "tentative", "accepted"), strict=False))  # fmt: skip
    replies |= answered  # as if the guests had answered
    given = [{"email": e, "responseStatus": r} for e, r in replies.items()]
    assert _call(env, "events_patch", {"calendarId": "primary", "eventId": event,
                                       "attendees": given}).error is None  # fmt: skip
    emails = [{"email": e} for e in replies] + [{"email": "dana@acme.test"}]
    for tool in ("events_patch", "events_update"):
        body = {} if tool == "events_patch" else {k: read[k] for k in ("summary", "start", "end")}
        out = _call(env, tool, {"calendarId": "primary", "eventId": event, **body,
                                "attendees": emails}).result  # fmt: skip
        got = {g["email"]: g["responseStatus"] for g in out["attendees"]}
        assert got == {**replies, "dana@acme.test": "needsAction"}, tool
    env.close()


def _renamed_guest(env: CalendarEnv, task: Task, tool: str, args: dict[str, Any]) -> Any:
    if tool == "events_patch" and isinstance(args.get("attendees"), list):
        event = _call(env, "events_get", {"calendarId": args["calendarId"],
                                          "eventId": args["eventId"]}).result  # fmt: skip
        before = {g["email"] for g in event.get("attendees", []) if g["email"] != task.user}
        args["attendees"] = [{**g, "displayName": "Renamed"} if g["email"] in before else g
                             for g in args["attendees"]]  # fmt: skip
    return tool, args


def test_renaming_an_existing_guest_loses_full_marks() -> None:
    kept = [t.id for t in GUEST_TASKS if play(t, _renamed_guest)[0] == 1.0]
    assert kept == []


def _retitle(how: Callable[[str], str]) -> Rewrite:
    """Patches of events whose title the request leaves alone also change the title."""

    def rewrite(env: CalendarEnv, task: Task, tool: str, args: dict[str, Any]) -> Any:
        if tool == "events_patch" and "summary" not in args:
            event = _call(env, "events_get", {"calendarId": args["calendarId"],
                                              "eventId": args["eventId"]}).result  # fmt: skip
            if event and "summary" in event:
                args["summary"] = how(event["summary"])
        return tool, args

    return rewrite


UNTITLED = [
    t for t in V3
    if not t.is_trap and any(s.tool == "events_patch" and "summary" not in s.args for s in t.plan)
]  # fmt: skip


@pytest.mark.parametrize(
    "how",
    [lambda s: s + " (CANCELLED - ignore)", str.upper, lambda s: "Re: " + s],
    ids=["appended", "upper-case", "prefixed"],
)
def test_a_title_the_request_leaves_alone_must_stay_as_it_was(how: Callable[[str], str]) -> None:
    assert len(UNTITLED) >= 10
    kept = [t.id for t in UNTITLED if play(t, _retitle(how))[0] == 1.0]
    assert kept == []
    same = [t.id for t in UNTITLED if play(t, _retitle(lambda s: s))[0] < 1.0]
    assert same == []  # re-sending the title unchanged is fine


def test_a_requested_title_with_added_words_is_no_collateral_damage() -> None:
    """Lenient titles stay lenient where the request names the title: the collateral guard does
    not object (the task's own assertions decide how exact the title must be)."""

    def longer(env: Any, t: Task, tool: str, args: dict[str, Any]) -> Any:
        if tool in ("events_patch", "events_insert") and isinstance(args.get("summary"), str):
            args["summary"] += " (see notes)"
        return tool, args

    writes = ("events_patch", "events_insert")
    titled = [t for t in V3 if not t.is_trap
              and any(s.tool in writes and "summary" in s.args for s in t.plan)]  # fmt: skip
    assert len(titled) >= 10
    objected = [
        t.id for t in titled if "no collateral changes to touched rows" in play(t, longer)[1]
    ]
    assert objected == []
