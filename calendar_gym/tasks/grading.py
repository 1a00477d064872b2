"""Grading a Calendar Gym task: assertions over the final state, partial credit, call statistics.

Deterministic and state-based, no model involved. The final state is normalised and diffed against
the seed (`calendar_gym.tasks.snapshot`); then every assertion of the task is checked, plus two
that every task has:

- **no writes outside the allowed set** — each change of the diff must match an `allowed_writes`
  pattern (a trap task allows none);
- **finish status** — `finish` was called with the expected status.

- **evidence** (suite v2 traps) — the calls that show the agent found out why the task cannot
  be done as asked (`Task.required_evidence`): a blind `finish` passes no trap.

`success` = every assertion holds. `fraction` = the share that hold. The reward (`score`) is the
fraction, but only when the episode made progress — at least one *goal* assertion holds that did
not hold on the seed (for a trap: the right finish status) — so an agent that does nothing, or
finishes at once, earns exactly 0 on every task that asks for a change.

As rubrics (`mcpgym.rubrics`): `TASK_RUBRIC = Sequential(at_end, Gate(progress), partial_credit)`,
which scores 0 on every step but the last and the gated partial credit at the end. `CalendarEnv`
sets it for task episodes; the framework applies it.

Example:
    >>> from calendar_gym.tasks import load_suite
    >>> from calendar_gym.tasks.snapshot import snapshot
    >>> from calendar_gym.world.store import Store
    >>> task = load_suite().get("t1-create-haircut")
    >>> seed = snapshot(Store.create(now=task.now))
    >>> g = grade(task, seed, seed, finish_status="done", calls=[])
    >>> g.success, g.score, g.progress
    (False, 0.0, False)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from calendar_gym.tasks.classify import Call
from calendar_gym.tasks.collateral import collateral
from calendar_gym.tasks.evidence import check_evidence, stray_attempts
from calendar_gym.tasks.model import (
    CountAssertion,
    ExistsAssertion,
    FieldAssertion,
    Task,
    UnchangedAssertion,
)
from calendar_gym.tasks.snapshot import KEYS, Change, Row, Snapshot, diff
from calendar_gym.tasks.values import entity_value, matches, resolve
from mcpgym.rubrics import Gate, RubricInput, Sequential, rubric

__all__ = [
    "TASK_RUBRIC",
    "AssertionResult",
    "CallStats",
    "Grade",
    "allowed",
    "call_stats",
    "check_assertions",
    "grade",
    "held_on_seed",
]


class AssertionResult(BaseModel):
    """One assertion's outcome; `held_before` is its value on the seed state."""

    name: str
    type: str
    goal: bool
    holds: bool
    held_before: bool = False
    detail: str = ""


class CallStats(BaseModel):
    """What the agent's calls add up to.

    `recoveries` pairs each unexpected failed call with the first later successful call of the
    same tool (indexes into the episode's calls); `expected_errors` are failures the task's plan
    foresees (a trap's denied write); `steps_to_success` is the number of calls a successful
    episode took (None when it failed).
    """

    calls: int = 0
    errors: int = 0
    expected_errors: int = 0
    error_codes: dict[str, int] = Field(default_factory=dict)
    writes: int = 0
    recoveries: list[tuple[int, int]] = Field(default_factory=list)
    recovered: int = 0
    unrecovered: int = 0
    steps_to_success: int | None = None


class Grade(BaseModel):
    """The grade of one episode of a task (what `observation.metadata["grade"]` holds)."""

    task: str
    success: bool
    score: float
    fraction: float
    progress: bool
    finish_status: str | None
    expected_finish: str
    assertions: list[AssertionResult]
    changes: list[dict[str, Any]] = Field(default_factory=list)
    stats: CallStats = Field(default_factory=CallStats)


# -- assertions ------------------------------------------------------------------------------------


def _entity(task: Task) -> Any:
    return lambda ref: entity_value(task, ref)


def _bind(where: Mapping[str, Any], state: Snapshot, user: str) -> dict[str, Any]:
    """`where` with `{"$calendar": {...}}` replaced by the ids of the matching calendars in
    `state` (for rows of a calendar the agent created, whose id the task cannot know)."""
    out: dict[str, Any] = {}
    for key, value in where.items():
        if isinstance(value, Mapping) and "$calendar" in value:
            ids = [r["id"] for r in _rows(state, "calendars", value["$calendar"], user)]
            value = {"$in": ids}
        out[key] = value
    return out


def _rows(state: Snapshot, table: str, where: Mapping[str, Any], user: str) -> list[Row]:
    bound = _bind(where, state, user)
    return [
        row
        for row in state.get(table, {}).values()
        if all(matches(v, row.get(k), user=user) for k, v in bound.items())
    ]


def _describe(where: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in where.items() if k not in ("calendar_id", "user_email")}
    return ", ".join(f"{k}={v}" for k, v in shown.items()) or "any row"


def _check(assertion: Any, task: Task, state: Snapshot, seed: Snapshot) -> tuple[bool, str]:
    user = task.user
    if isinstance(assertion, ExistsAssertion | CountAssertion):
        where = resolve(assertion.where, _entity(task))
        found = len(_rows(state, assertion.table, where, user))
        want = assertion.min if isinstance(assertion, ExistsAssertion) else assertion.count
        ok = found >= want if isinstance(assertion, ExistsAssertion) else found == want
        return ok, f"{found} {assertion.table} row(s) with {_describe(where)}"
    if isinstance(assertion, FieldAssertion):
        key_fields = resolve(assertion.key, _entity(task))
        key = tuple(str(key_fields[k]) for k in KEYS[assertion.table])
        row = state.get(assertion.table, {}).get(key)
        if row is None:
            return False, f"no {assertion.table} row {list(key)}"
        equals = resolve(assertion.equals, _entity(task))
        wrong = [k for k, v in equals.items() if not matches(v, row.get(k), user=user)]
        return not wrong, (f"{', '.join(wrong)} differ" if wrong else "fields match")
    assert isinstance(assertion, UnchangedAssertion)
    where = resolve(assertion.where, _entity(task))
    where = _bind(where, seed, user)
    keys = [k for k, row in seed.get(assertion.table, {}).items() if _matches_row(row, where, user)]
    changed = [k for k in keys if state.get(assertion.table, {}).get(k) != seed[assertion.table][k]]
    return not changed, f"{len(changed)} of {len(keys)} row(s) changed"


def _matches_row(row: Row, where: Mapping[str, Any], user: str) -> bool:
    return all(matches(v, row.get(k), user=user) for k, v in where.items())


def allowed(task: Task, change: Change, state: Snapshot) -> bool:
    """Whether the task allows `change` (some pattern matches its row before or after);
    `state` is the world after the change (patterns may name calendars by `$calendar`)."""
    for pattern in task.allowed_writes:
        if pattern.table != change.table or change.op not in pattern.ops:
            continue
        where = _bind(resolve(pattern.where, _entity(task)), state, task.user)
        rows = [r for r in (change.before, change.after) if r is not None]
        if any(_matches_row(r, where, task.user) for r in rows):
            return True
    return False


def held_on_seed(task: Task, seed: Snapshot) -> list[bool]:
    """Whether each assertion of `task` already holds on the seed state."""
    return [_check(a, task, seed, seed)[0] for a in task.assertions]


def check_assertions(
    task: Task,
    seed: Snapshot,
    final: Snapshot,
    finish_status: str | None,
    *,
    changes: Sequence[Change] | None = None,
    before: Sequence[bool] | None = None,
) -> list[AssertionResult]:
    """Every assertion of `task` on `final`, then the two implicit ones: no writes outside the
    allowed set, and the finish status. `changes` (the seed→final diff) and `before`
    (`held_on_seed`) are computed when not given."""
    before = held_on_seed(task, seed) if before is None else before
    changes = diff(seed, final) if changes is None else changes
    out: list[AssertionResult] = []
    for i, assertion in enumerate(task.assertions):
        holds, detail = _check(assertion, task, final, seed)
        name = assertion.name or f"{assertion.type} #{i + 1}"
        out.append(AssertionResult(name=name, type=assertion.type, goal=assertion.goal,
                                   holds=holds, held_before=before[i], detail=detail))  # fmt: skip
    outside = [c for c in changes if not allowed(task, c, final)]
    out.append(
        AssertionResult(
            name="no writes outside the allowed set",
            type="allowed_writes",
            goal=False,
            holds=not outside,
            held_before=True,
            detail="; ".join(f"{c.op} {c.table} {list(c.key)}" for c in outside[:5]) or "none",
        )
    )
    out.append(
        AssertionResult(
            name="finish status",
            type="finish",
            goal=task.is_trap,
            holds=finish_status == task.finish,
            detail=f"finish({finish_status!r}), expected {task.finish!r}",
        )
    )
    return out


# -- calls -----------------------------------------------------------------------------------------


def call_stats(
    calls: Sequence[Call], success: bool, expected: Collection[tuple[str, str]] = ()
) -> CallStats:
    """Counts, error codes and error→recovery pairs of an episode's calls.

    `expected` holds `(tool, code)` pairs a task's plan expects (a trap's denied write): such
    errors are counted in `errors` and `expected_errors` but need no recovery.
    """
    codes = Counter(c.error for c in calls if c.error)
    pairs: list[tuple[int, int]] = []
    foreseen = 0
    for i, call in enumerate(calls):
        if call.error is None:
            continue
        if (call.tool, call.error) in expected:
            foreseen += 1
            continue
        later = next(
            (
                j
                for j in range(i + 1, len(calls))
                if calls[j].tool == call.tool and not calls[j].error
            ),
            None,
        )
        if later is not None:
            pairs.append((i, later))
    errors = sum(codes.values())
    return CallStats(
        calls=len(calls),
        errors=errors,
        expected_errors=foreseen,
        error_codes=dict(sorted(codes.items())),
        writes=sum(c.wrote for c in calls),
        recoveries=pairs,
        recovered=len(pairs),
        unrecovered=errors - foreseen - len(pairs),
        steps_to_success=len(calls) if success else None,
    )


def _collateral(task: Task, seed: Snapshot, final: Snapshot, ref: Snapshot) -> AssertionResult:
    wrong = collateral(seed, final, ref, user=task.user)
    return AssertionResult(name="no collateral changes to touched rows", type="collateral",
                           goal=False, holds=not wrong, held_before=True,
                           detail="; ".join(wrong[:5]) or "none")  # fmt: skip


_GUARDS = ("allowed_writes", "collateral", "unchanged", "evidence")


def shaped_score(results: Sequence[AssertionResult], success: bool) -> float:
    """The suite-v3 reward, monotone in real progress: 1.0 when solved; 0 when a guard fails (a
    write outside the allowed set, collateral damage, a changed row that must stay, a trap
    without evidence, a write attempt beyond a trap's refused request); otherwise half the share
    of the goals that newly hold, and a fifth of that when the finish status is wrong (doing the
    work and then misreporting it is not progress a trainer should pay for). Holding guards alone
    is worth nothing, so an episode that does nothing useful earns 0.

    Example:
        >>> goal = AssertionResult(name="g", type="field", goal=True, holds=True)
        >>> miss = goal.model_copy(update={"holds": False})
        >>> wrong = AssertionResult(name="f", type="finish", goal=False, holds=False)
        >>> shaped_score([goal, miss], False), shaped_score([goal, wrong], False)
        (0.25, 0.1)
    """
    if success:
        return 1.0
    if any(r.type in _GUARDS and not r.holds for r in results):
        return 0.0
    goals = [r for r in results if r.goal and not r.held_before]
    share = 0.5 * sum(r.holds for r in goals) / len(goals) if goals else 0.0
    finished_right = all(r.holds for r in results if r.type == "finish")
    return share if finished_right else round(share * 0.2, 6)


def grade(
    task: Task,
    seed: Snapshot,
    final: Snapshot,
    *,
    finish_status: str | None,
    calls: Sequence[Call],
    before: Sequence[bool] | None = None,
    reference: Snapshot | None = None,
) -> Grade:
    """Grade one episode of `task` from its seed and final snapshots and its calls (`before`:
    `held_on_seed`, if already known; `reference`: the gold plan's final state, which suite v3
    compares every touched row with)."""
    changes = diff(seed, final)
    results = check_assertions(task, seed, final, finish_status, changes=changes, before=before)
    if reference is not None and task.suite not in ("1", "2"):
        results.append(_collateral(task, seed, final, reference))
    results += [
        AssertionResult(
            name=name,
            type="evidence",
            goal=False,
            holds=ok,
            detail="found" if ok else "no such call",
        )
        for name, ok in check_evidence(task, calls)
    ]
    if task.is_trap and task.suite not in ("1", "2"):
        stray = stray_attempts(task, calls)
        results.append(AssertionResult(name="no write attempts beyond the refused request",
                                       type="evidence", goal=False, holds=not stray,
                                       detail=f"calls {stray}" if stray else "none"))  # fmt: skip
    success = all(r.holds for r in results)
    fraction = sum(r.holds for r in results) / len(results)
    # A trap's right status counts as progress only with its evidence: no credit for guessing.
    evidenced = all(r.holds for r in results if r.type == "evidence")
    progress = evidenced and any(r.goal and r.holds and not r.held_before for r in results)
    if task.suite in ("1", "2"):
        score = fraction if progress else 0.0  # reproducible: v1/v2 keep their reward
    else:
        score = shaped_score(results, success) if progress else 0.0
    return Grade(
        task=task.id,
        success=success,
        score=score,
        fraction=fraction,
        progress=progress,
        finish_status=finish_status,
        expected_finish=task.finish,
        assertions=results,
        changes=[c.summary() for c in changes],
        stats=call_stats(
            calls, success, {(s.tool, s.expect_error) for s in task.plan if s.expect_error}
        ),
    )


# -- rubrics ---------------------------------------------------------------------------------------


def _grade_of(inp: RubricInput) -> Grade:
    found = inp.env.task_grade() if inp.env is not None else None
    if found is None:
        raise ValueError("the calendar task rubric needs a CalendarEnv reset with a task")
    return found


TASK_RUBRIC = Sequential(
    rubric(lambda inp: 1.0 if inp.done else 0.0, name="episode_end"),
    Gate(rubric(lambda inp: 1.0 if _grade_of(inp).progress else 0.0, name="progress")),
    rubric(lambda inp: _grade_of(inp).score, name="partial_credit"),
    name="task_score",
)
"""The reward of a task episode: 0 until `done`; then 0 without progress, else the grade's
`score` — the fraction of assertions that hold on suites v1/v2, the monotone shaped score
(`shaped_score`) from suite v3 (1.0 exactly when the task is solved)."""
