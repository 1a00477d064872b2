"""Trap evidence: whether an episode's calls show the agent found out why a task cannot be done.

A trap's right finish status earns credit only with evidence (`Task.required_evidence`): the
refused attempt, a look-up that listed several candidates, a search for a missing entity — and,
from suite v3, the read that establishes the same fact as the refused attempt (`Evidence.shows`,
`Evidence.any_of`), so looking first is never marked down.

Example:
    >>> from calendar_gym.tasks.classify import Call
    >>> from calendar_gym.tasks.model import Evidence
    >>> from calendar_gym.tasks import load_suite
    >>> task = load_suite().get("t1-create-haircut")
    >>> rule = Evidence(tools=["calendarList_list"], shows={"accessRole": "reader"})
    >>> listed = Call("calendarList_list", {}, None, {"items": [{"accessRole": "reader"}]})
    >>> evidence_holds(task, rule, [listed]), evidence_holds(task, rule, [])
    (True, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from calendar_gym.tasks.classify import Call
from calendar_gym.tasks.model import READ_TOOLS, Evidence, Task
from calendar_gym.tasks.values import entity_value, matches, resolve

__all__ = ["check_evidence", "evidence_holds", "stray_attempts"]


def _entity(task: Task) -> Any:
    return lambda ref: entity_value(task, ref)


def _matches_row(row: Mapping[str, Any], where: Mapping[str, Any], user: str) -> bool:
    return all(matches(v, row.get(k), user=user) for k, v in where.items())


def _candidates(result: Any) -> list[tuple[str, str]]:
    """(id, name) of every candidate a lookup result lists (people, groups, events, calendars)."""
    if not isinstance(result, Mapping):
        return []
    out = []
    for key in ("users", "groups", "items"):
        for item in result.get(key) or []:
            if isinstance(item, Mapping):
                ident = str(item.get("email") or item.get("id") or "")
                name = str(item.get("name") or item.get("summaryOverride") or "")
                out.append((ident, f"{name} {item.get('summary') or ''}".strip()))
    return out


def _shown(result: Any) -> list[Mapping[str, Any]]:
    """The records a successful call's result shows: the result and each of its `items`."""
    if not isinstance(result, Mapping):
        return []
    items = [i for i in result.get("items") or [] if isinstance(i, Mapping)]
    return [result, *items]


def evidence_holds(task: Task, rule: Evidence, calls: Sequence[Call]) -> bool:
    """Whether `calls` contain what `rule` asks for (see `Evidence`; `any_of`: one alternative)."""
    if rule.any_of and any(evidence_holds(task, alt, calls) for alt in rule.any_of):
        return True
    if not rule.tools:
        return False
    shows = resolve(rule.shows, _entity(task)) if rule.shows is not None else None
    found: set[str] = set()
    expected = resolve(rule.args, _entity(task))
    for call in calls:
        if call.tool not in rule.tools:
            continue
        if not all(matches(v, call.arguments.get(k), user=task.user) for k, v in expected.items()):
            continue
        if rule.error is not None:
            if call.error == rule.error:
                return True
            continue
        if shows is not None:
            seen = _shown(call.result) if call.error is None else []
            if any(_matches_row(dict(r), shows, task.user) for r in seen):
                return True
            continue
        if rule.min_found <= 0:
            return True  # it was looked for (a NOT_FOUND is an answer too)
        if call.error is not None:
            continue
        named = (rule.named or "").casefold()
        found |= {i for i, n in _candidates(call.result) if named in n.casefold()}
        if len(found) >= rule.min_found:
            return True
    return False


def check_evidence(task: Task, calls: Sequence[Call]) -> list[tuple[str, bool]]:
    """`(name, holds)` per evidence rule the task requires (none for suite v1 or non-traps)."""
    return [
        (f"evidence: {rule.name or ', '.join(rule.tools)}", evidence_holds(task, rule, calls))
        for rule in task.required_evidence()
    ]


def stray_attempts(task: Task, calls: Sequence[Call]) -> list[int]:
    """Indexes of a trap episode's write attempts beyond the refused request (suite v3): a
    write call, failed or not, whose calendar or event is not the one a plan step expects to be
    refused. Trying the request as asked is one way to find out; trying it on a near-duplicate
    is a guess, whatever error it earns (a positional picker's denied write on the wrong
    calendar is not evidence, and its `cannot_complete` is not a finding)."""
    if not task.is_trap or task.suite in ("1", "2"):
        return []
    targets = []
    for step in task.plan:
        if step.expect_error is not None:
            args = resolve(step.args, _entity(task))
            targets.append({k: args[k] for k in ("calendarId", "eventId") if k in args})
    return [
        i
        for i, call in enumerate(calls)
        if call.tool not in READ_TOOLS
        and call.tool != "finish"
        and not any(
            all(matches(v, call.arguments.get(k), user=task.user) for k, v in t.items())
            for t in targets
        )
    ]
