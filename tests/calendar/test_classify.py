"""The failure classifier over hand-labelled call sequences (at least five per label).

The tasks are written here, not taken from the suite, so each sequence's expected labels follow
from the plan shown next to it."""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym.tasks.classify import ALL_LABELS, LABELS, PUBLISHED_SPLIT, Call, classify, counts
from calendar_gym.tasks.model import Task

BOB = "bob@acme.test"
T_9 = {"dateTime": "2026-03-10T09:00:00-04:00"}
T_930 = {"dateTime": "2026-03-10T09:30:00-04:00"}
T_10 = {"dateTime": "2026-03-10T10:00:00-04:00"}

# create a calendar -> share it with Bob; read an event -> move it; then book the freed hour.
WORKFLOW = Task.model_validate(
    {
        "id": "unit-workflow",
        "tier": "T3",
        "kind": "unit",
        "title": "unit workflow",
        "prompts": {"explicit": "e", "natural": "n"},
        "entities": {"bob": {"kind": "person", "id": BOB, "name": "Bob"}},
        "plan": [
            {"id": "create", "tool": "calendars_insert", "args": {"summary": "Hack"}},
            {"id": "share", "tool": "acl_insert", "after": ["create"],
             "args": {"calendarId": {"$from": "create.id"}, "role": "writer",
                      "scope": {"type": "user", "value": {"$e": "bob"}}}},
            {"id": "get", "tool": "events_get",
             "args": {"calendarId": "primary", "eventId": "ev1"}},
            {"id": "move", "tool": "events_patch", "after": ["get"],
             "args": {"calendarId": "primary", "eventId": "ev1", "start": T_930, "end": T_10}},
            {"id": "book", "tool": "events_insert", "after": ["move"],
             "args": {"calendarId": "primary", "summary": "Pitch", "start": T_9, "end": T_930}},
            {"id": "finish", "tool": "finish", "args": {"status": "done"},
             "after": ["share", "book"]},
        ],
    }
)  # fmt: skip

# a permission trap: the write must fail, then finish(cannot_complete)
TRAP = Task.model_validate(
    {
        "id": "unit-trap",
        "tier": "T4",
        "kind": "unit",
        "title": "unit trap",
        "finish": "cannot_complete",
        "prompts": {"explicit": "e", "natural": "n"},
        "plan": [
            {"id": "insert", "tool": "events_insert", "expect_error": "PERMISSION_DENIED",
             "args": {"calendarId": "fin", "summary": "X", "start": T_9, "end": T_10}},
            {"id": "finish", "tool": "finish", "args": {"status": "cannot_complete"},
             "after": ["insert"]},
        ],
    }
)  # fmt: skip

CAL = {"id": "c_new@group.calendar.google.com"}


def c(tool: str, error: str | None = None, **kw: Any) -> Call:
    """A call: keyword arguments are its arguments, except `result_`, `wrote_`, `outside_`."""
    result = kw.pop("result_", None)
    wrote, outside = kw.pop("wrote_", False), kw.pop("outside_", False)
    return Call(tool, kw, error, result, wrote or outside, outside)


def finish(status: str = "done", error: str | None = None) -> Call:
    return c("finish", error, status=status, summary="s")


def create(**kw: Any) -> Call:
    return c("calendars_insert", summary="Hack", result_=CAL, wrote_=True, **kw)


def share(error: str | None = None, cal: str = CAL["id"], **kw: Any) -> Call:
    args = {"calendarId": cal, "role": "writer", "scope": {"type": "user", "value": BOB}}
    args.update(kw)
    return c("acl_insert", error, **args)


def move(error: str | None = None, start: Any = T_930, event: str = "ev1", **kw: Any) -> Call:
    return c(
        "events_patch", error, calendarId="primary", eventId=event, start=start, end=T_10, **kw
    )


def book(error: str | None = None, **kw: Any) -> Call:
    return c("events_insert", error, calendarId="primary", summary="Pitch", start=T_9, end=T_930,
             **kw)  # fmt: skip


def labels(task: Task, calls: list[Call]) -> list[tuple[int, str]]:
    return [(f.index, f.label) for f in classify(task, calls)]


SOLVED = [create(), share(wrote_=True), c("events_get", calendarId="primary", eventId="ev1"),
          move(wrote_=True), book(wrote_=True), finish()]  # fmt: skip

CASES: dict[str, list[tuple[str, Task, list[Call], list[tuple[int, str]]]]] = {
    "wrong_tool": [
        ("unknown tool", WORKFLOW, [c("create_calendar", "UNKNOWN_TOOL", summary="Hack")],
         [(0, "wrong_tool")]),
        ("dotted unknown tool", WORKFLOW, [c("events.insert", "UNKNOWN_TOOL")],
         [(0, "wrong_tool")]),
        ("failing tool no step uses", WORKFLOW,
         [c("calendars_delete", "NOT_FOUND", calendarId="Hack")], [(0, "wrong_tool")]),
        ("acl_delete instead of acl_insert", WORKFLOW,
         [create(), c("acl_delete", "NOT_FOUND", calendarId=CAL["id"], ruleId=f"user:{BOB}")],
         [(1, "wrong_tool")]),
        ("write outside the set with a tool no step uses", WORKFLOW,
         [c("calendarList_patch", calendarId="primary", hidden=True, outside_=True)],
         [(0, "wrong_tool")]),
        ("write inside the set with a tool no step uses", WORKFLOW,
         [c("events_delete", calendarId="primary", eventId="ev1", wrote_=True)],
         [(0, "wrong_tool")]),
    ],
    "wrong_args": [
        ("local time without offset", WORKFLOW,
         [move("INVALID_FORMAT", start={"dateTime": "2026-03-10T09:30:00"})],
         [(0, "wrong_args")]),
        ("NOT_FOUND on an invented id", WORKFLOW,
         [c("events_get", calendarId="primary", eventId="ev1"), move("NOT_FOUND", event="ev9")],
         [(1, "wrong_args")]),
        ("missing required field", WORKFLOW,
         [c("calendars_insert", "MISSING_REQUIRED_FIELD", title="Hack")], [(0, "wrong_args")]),
        ("wrong role (successful)", WORKFLOW, [create(), share(role="reader", wrote_=True)],
         [(1, "wrong_args")]),
        ("wrong recipient, outside the allowed set", WORKFLOW,
         [create(), share(scope={"type": "user", "value": "alice@acme.test"}, outside_=True)],
         [(1, "wrong_args")]),
        ("wrong time, inside the allowed set", WORKFLOW,
         [move(start={"dateTime": "2026-03-10T09:30:00-05:00"}, wrote_=True)],
         [(0, "wrong_args")]),
    ],
    "wrong_args+": [
        ("repeated failed call", WORKFLOW,
         [move("INVALID_FORMAT", start="9:30"), move("INVALID_FORMAT", start="9:30")],
         [(0, "wrong_args"), (1, "wrong_args")]),
    ],
    "wrong_order": [
        ("share before the calendar exists", WORKFLOW, [share("NOT_FOUND", cal="Hack")],
         [(0, "wrong_order")]),
        ("share denied before create", WORKFLOW, [share("PERMISSION_DENIED", cal="c_x")],
         [(0, "wrong_order")]),
        ("finish first", WORKFLOW, [finish()], [(0, "wrong_order")]),
        ("finish before the later writes", WORKFLOW, [create(), share(wrote_=True), finish()],
         [(2, "wrong_order")]),
        ("book fails before the move freed the slot", WORKFLOW, [book("CONFLICT")],
         [(0, "wrong_order")]),
        ("repeated successful write", WORKFLOW, [create(), create()], [(1, "wrong_order")]),
        ("redoing a done step", WORKFLOW, [create(), share(wrote_=True), share("CONFLICT")],
         [(2, "wrong_order")]),
        ("share elsewhere before create, outside the set", WORKFLOW,
         [share(cal="c_other@group.calendar.google.com", outside_=True)],
         [(0, "wrong_order")]),
    ],
    "other": [
        ("internal error", WORKFLOW, [create(error="INTERNAL")], [(0, "other")]),
        ("timeout", WORKFLOW, [c("events_get", "TIMEOUT", calendarId="primary", eventId="ev1")],
         [(0, "other")]),
        ("read-only token on the right call", WORKFLOW, [create(error="INSUFFICIENT_SCOPE")],
         [(0, "other")]),
        ("unexpected permission denial on the right call", WORKFLOW,
         [create(), share("PERMISSION_DENIED", wrote_=False)], [(1, "other")]),
        ("timeout after a good start", WORKFLOW,
         [create(), c("events_get", "TIMEOUT", calendarId="primary", eventId="ev1")],
         [(1, "other")]),
    ],
    "wrong_finish": [
        ("wrong finish status", WORKFLOW, [*SOLVED[:-1], finish("cannot_complete")],
         [(5, "wrong_finish")]),
        ("finish twice", WORKFLOW, [*SOLVED, finish(error="FORBIDDEN_OPERATION")],
         [(6, "wrong_finish")]),
        ("trap: claiming done", TRAP,
         [c("events_insert", "PERMISSION_DENIED", calendarId="fin", summary="X", start=T_9,
            end=T_10), finish("done")],
         [(1, "wrong_finish")]),
        ("trap: asking instead of reporting", TRAP, [finish("needs_clarification")],
         [(0, "wrong_finish")]),
        ("giving up on a solvable task", WORKFLOW, [finish("cannot_complete")],
         [(0, "wrong_finish")]),
    ],
    "trap_write": [
        ("write in a trap task", TRAP,
         [c("events_insert", calendarId="primary", summary="X", start=T_9, end=T_10,
            outside_=True), finish("cannot_complete")],
         [(0, "trap_write")]),
        ("two writes in a trap task", TRAP,
         [c("events_insert", calendarId="primary", summary="X", start=T_9, end=T_10,
            outside_=True),
          c("events_insert", calendarId="primary", summary="Y", start=T_9, end=T_10,
            outside_=True)],
         [(0, "trap_write"), (1, "trap_write")]),
        ("calendar created in a trap task", TRAP,
         [c("calendars_insert", summary="Z", outside_=True)], [(0, "trap_write")]),
        ("share in a trap task", TRAP,
         [c("acl_insert", calendarId="primary", role="reader",
            scope={"type": "user", "value": BOB}, outside_=True)], [(0, "trap_write")]),
        ("write in a trap, then the right status", TRAP,
         [c("events_patch", calendarId="primary", eventId="e", summary="Q", outside_=True),
          finish("cannot_complete")], [(0, "trap_write")]),
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("label", "name", "task", "calls", "expected"),
    [(label, *case) for label, cases in CASES.items() for case in cases],
    ids=[f"{label}: {case[0]}" for label, cases in CASES.items() for case in cases],
)
def test_hand_labelled_sequence(
    label: str, name: str, task: Task, calls: list[Call], expected: list[tuple[int, str]]
) -> None:
    assert labels(task, calls) == expected
    assert label.rstrip("+") in {lab for _, lab in expected}


def test_at_least_five_sequences_per_label() -> None:
    for label in ALL_LABELS:
        assert len(CASES[label]) >= 5, label


def test_a_solved_episode_has_no_failures() -> None:
    assert labels(WORKFLOW, SOLVED) == []


def test_reads_that_advance_nothing_are_exploration() -> None:
    calls = [c("calendarList_list"), c("settings_get", setting="now"),
             c("events_list", calendarId="primary", q="x"), *SOLVED]  # fmt: skip
    assert labels(WORKFLOW, calls) == []


def test_the_expected_error_of_a_trap_advances_it() -> None:
    calls = [c("events_insert", "PERMISSION_DENIED", calendarId="fin", summary="X", start=T_9,
               end=T_10), finish("cannot_complete")]  # fmt: skip
    assert labels(TRAP, calls) == []
    assert labels(TRAP, [finish("cannot_complete")]) == []  # skipping a doomed write is fine


def test_patch_and_update_are_interchangeable() -> None:
    update = c("events_update", calendarId="primary", eventId="ev1", start=T_930, end=T_10,
               wrote_=True)  # fmt: skip
    calls = [create(), share(wrote_=True), update, book(wrote_=True), finish()]
    assert labels(WORKFLOW, calls) == []


@pytest.mark.parametrize("resource", ["calendars", "calendarList", "acl"])
def test_every_patch_and_put_pair_aligns(resource: str) -> None:
    args = {"calendarId": "primary", "summary": "Renamed"}
    if resource == "calendarList":
        args = {"calendarId": "primary", "summaryOverride": "Mine"}
    elif resource == "acl":
        args = {"calendarId": "primary", "ruleId": f"user:{BOB}", "role": "reader"}
    task = Task.model_validate(
        {"id": "unit-put", "tier": "T1", "kind": "unit", "title": "unit put",
         "prompts": {"explicit": "e", "natural": "n"},
         "plan": [{"id": "change", "tool": f"{resource}_patch", "args": args},
                  {"id": "finish", "tool": "finish", "args": {"status": "done"},
                   "after": ["change"]}]}
    )  # fmt: skip
    put = c(f"{resource}_update", wrote_=True, **args)
    assert labels(task, [put, finish()]) == []
    other = c("calendars_delete", "FORBIDDEN_OPERATION", calendarId="primary")
    assert labels(task, [other]) == [(0, "wrong_tool")]


def test_one_mistake_is_counted_once() -> None:
    # the wrong move is labelled; the finish that follows it is not labelled again
    calls = [create(), share(wrote_=True), move(start=T_9, wrote_=True), book(wrote_=True),
             finish()]  # fmt: skip
    assert labels(WORKFLOW, calls) == [(2, "wrong_args")]


def test_reasons_name_the_differing_arguments() -> None:
    (failure,) = classify(WORKFLOW, [move("NOT_FOUND", event="ev9")])
    assert failure.step == "move" and "eventId" in failure.reason
    assert failure.as_dict()["label"] == "wrong_args"


def test_counts_and_published_split_cover_every_label() -> None:
    found = counts(classify(WORKFLOW, [finish(), c("nope", "UNKNOWN_TOOL")]))
    assert found == {"wrong_tool": 1, "wrong_args": 0, "wrong_order": 1, "other": 0,
                     "wrong_finish": 0, "trap_write": 0}  # fmt: skip
    assert list(PUBLISHED_SPLIT) == list(LABELS)
    assert abs(sum(PUBLISHED_SPLIT.values()) - 1.0) < 1e-9
