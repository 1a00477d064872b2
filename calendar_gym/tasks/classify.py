"""The failure classifier: why did a call fail? wrong_tool / wrong_args / wrong_order / other,
plus wrong_finish and trap_write.

The first four are the published taxonomy of failed tool calls (Turing and Hugging Face, "OpenEnv
in Practice: Evaluating Tool-Using Agents in Real-World Environments", Hugging Face blog,
12 February 2026, https://huggingface.co/blog/openenv-turing), where `other` means timeouts and
authentication/authorisation failures. Like for like, `other` here holds only those; a wrong
finish status (`wrong_finish`) and a write in a trap task (`trap_write`) are not tool-call
failures of that kind and get labels of their own, reported beside the published split.

Each agent call is aligned with the gold plan: among the steps not yet done that use the same tool
(`events_patch` and `events_update` count as one), the step whose arguments are closest (the share
of its matched argument keys that agree, see `calendar_gym.tasks.values.matches`), preferring a
step whose prerequisites are done, then plan order. Then:

**Errored calls** are all labelled:
- `wrong_tool` — an unknown tool, or a tool no step of the plan uses;
- `other` — timeouts, internal errors, and auth failures (`INSUFFICIENT_SCOPE`, or a
  `PERMISSION_DENIED` no step expects) on a call whose arguments match its step;
- a call redoing a step already done, or repeating a write: `wrong_order`; a repeat of a failed
  call is labelled like the first one;
- a call that gets exactly the error its step expects (a trap's `PERMISSION_DENIED`) advances the
  plan and is not a failure;
- `wrong_order` — the arguments match the step but a write it depends on is not done yet;
- `wrong_args` — otherwise: validation failures, or an id, time, role or recipient that differs
  from the step's (a `NOT_FOUND` on an invented id lands here).

**Successful calls** are labelled only when they did harm or did not advance the plan:
- a write outside the task's allowed set: `trap_write` in a trap task, else aligned as above
  (`wrong_tool` / `wrong_order` / `wrong_args`);
- a write that matches no step closely enough: `wrong_args` (or `wrong_tool` without any step of
  that tool, `wrong_order` when it repeats an earlier call or redoes a done step);
- `finish` with the wrong status, or called again: `wrong_finish`; with the right status before
  the plan's writes are
  done: `wrong_order` (unless each missing step was attempted and already labelled: one mistake
  is counted once).
Reads that advance nothing are exploration, not failures: the gold plan is one solution, and
looking around costs steps, not correctness. A successful call that fully matches a step advances
it even out of order (order matters when it breaks something, and then a call fails).

Example:
    >>> from calendar_gym.tasks import load_suite
    >>> task = load_suite().get("t1-create-haircut")
    >>> calls = [Call("create_event", {}, error="UNKNOWN_TOOL"),
    ...          Call("finish", {"status": "done", "summary": "ok"})]
    >>> [f.label for f in classify(task, calls)]
    ['wrong_tool', 'wrong_order']
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from calendar_gym.tasks.model import READ_TOOLS, Step, Task
from calendar_gym.tasks.values import ANY, entity_value, matches, resolve

__all__ = [
    "ALL_LABELS",
    "EXTRA_LABELS",
    "LABELS",
    "PUBLISHED_SOURCE",
    "PUBLISHED_SPLIT",
    "Call",
    "Failure",
    "Label",
    "classify",
    "counts",
]

Label = Literal["wrong_tool", "wrong_args", "wrong_order", "other", "wrong_finish", "trap_write"]
LABELS: tuple[Label, ...] = ("wrong_tool", "wrong_args", "wrong_order", "other")
"""The published taxonomy's labels (shares are computed over these only)."""
EXTRA_LABELS: tuple[Label, ...] = ("wrong_finish", "trap_write")
"""Outcome failures that are not failed tool calls, reported beside the published split."""
ALL_LABELS: tuple[Label, ...] = LABELS + EXTRA_LABELS
PUBLISHED_SOURCE = (
    'Turing and Hugging Face, "OpenEnv in Practice: Evaluating Tool-Using Agents in Real-World '
    'Environments", Hugging Face blog, 12 Feb 2026, https://huggingface.co/blog/openenv-turing'
)
"""Where the published figures (~90 % vs ~40 % success; the 23/51/18/8 split) come from."""
PUBLISHED_SPLIT: dict[str, float] = {
    "wrong_tool": 0.23,
    "wrong_args": 0.51,
    "wrong_order": 0.18,
    "other": 0.08,
}
"""The split of failed tool calls published for the Calendar Gym (`PUBLISHED_SOURCE`)."""

_PATCH_PUT = ("events", "calendars", "calendarList", "acl")
_EQUIVALENT = {
    **{f"{r}_patch": f"{r}_update" for r in _PATCH_PUT},
    **{f"{r}_update": f"{r}_patch" for r in _PATCH_PUT},
}
"""A step done with the PATCH or the PUT method of the same resource aligns either way (the
grader judges the resulting state, e.g. a PUT that clears a field another assertion needs)."""
_IDENTITY = ("calendarId", "eventId", "ruleId", "id", "items", "setting", "destination")
_UNMATCHED = ("sendUpdates", "sendNotifications")
_OTHER_CODES = {"INTERNAL", "TIMEOUT"}
_AUTH_CODES = {"INSUFFICIENT_SCOPE", "PERMISSION_DENIED", "UNAUTHENTICATED"}


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call as the classifier sees it.

    `error` is the error code (`UNKNOWN_TOOL`, `INVALID_FORMAT`, `NOT_FOUND`, `TIMEOUT`, ...) or
    None; `outside` says whether it wrote outside the task's allowed set.
    """

    tool: str
    arguments: dict[str, Any]
    error: str | None = None
    result: Any = None
    wrote: bool = False
    outside: bool = False


@dataclass(frozen=True, slots=True)
class Failure:
    """A labelled call: its index in the episode's calls, the label, why, and the gold step."""

    index: int
    tool: str
    label: Label
    reason: str
    step: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (for observation metadata)."""
        return {
            "call": self.index,
            "tool": self.tool,
            "label": self.label,
            "reason": self.reason,
            "step": self.step,
        }


def counts(failures: Sequence[Failure]) -> dict[str, int]:
    """Failures per label, every label present (published ones first)."""
    found = Counter(f.label for f in failures)
    return {label: found.get(label, 0) for label in ALL_LABELS}


class _Plan:
    """The gold plan's progress while calls are replayed."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.done: set[str] = set()
        self.results: dict[str, Any] = {}
        self.by_id = {s.id: s for s in task.plan}

    def _entity(self, ref: str) -> Any:
        value = entity_value(self.task, ref)
        return ANY if value is None else value

    def keys(self, step: Step) -> list[str]:
        if step.match is not None:
            return list(step.match)
        if step.tool == "finish":
            return ["status"]
        if step.tool in READ_TOOLS:
            return [k for k in step.args if k in _IDENTITY]
        return [k for k in step.args if k not in _UNMATCHED]

    def score(self, step: Step, args: dict[str, Any]) -> tuple[float, list[str]]:
        """Share of the step's matched keys that agree, and the keys that differ."""
        keys = self.keys(step)
        if not keys:
            return 1.0, []
        wrong = []
        for key in keys:
            expected = resolve(step.args.get(key), self._entity, self.results)
            if key not in args or not matches(expected, args[key], user=self.task.user):
                wrong.append(key)
        return 1.0 - len(wrong) / len(keys), wrong

    def effectful(self, step: Step) -> bool:
        return step.writes and step.expect_error is None

    def missing(self, step: Step) -> list[str]:
        """Effectful steps this one depends on (transitively) that are not done."""
        if step.tool == "finish":
            return [s.id for s in self.task.plan if self.effectful(s) and s.id not in self.done]
        out: list[str] = []
        todo, seen = list(step.after), set()
        while todo:
            sid = todo.pop()
            if sid in seen:
                continue
            seen.add(sid)
            dep = self.by_id[sid]
            if self.effectful(dep) and sid not in self.done:
                out.append(sid)
            todo.extend(dep.after)
        return sorted(out)

    def candidates(self, tool: str, *, pending: bool = True) -> list[Step]:
        tools = {tool, _EQUIVALENT.get(tool, tool)}
        return [s for s in self.task.plan if s.tool in tools and (s.id not in self.done) == pending]

    def best(self, tool: str, args: dict[str, Any]) -> tuple[Step, float, list[str]] | None:
        ranked = []
        for order, step in enumerate(self.candidates(tool)):
            score, wrong = self.score(step, args)
            ranked.append(((score, not self.missing(step), -order), step, score, wrong))
        if not ranked:
            return None
        _, step, score, wrong = max(ranked, key=lambda r: r[0])
        return step, score, wrong

    def advance(self, step: Step, result: Any) -> None:
        self.done.add(step.id)
        self.results[step.id] = result


def _key(call: Call) -> str:
    return call.tool + json.dumps(call.arguments, sort_keys=True, default=str)


def _differs(wrong: list[str], step: Step) -> str:
    return f"{', '.join(wrong)} differ from step {step.id!r}" if wrong else f"step {step.id!r}"


class _Classifier:
    def __init__(self, task: Task) -> None:
        self.task = task
        self.plan = _Plan(task)
        self.seen: set[str] = set()
        self.finished = False
        self.attempted: set[str] = set()

    def label(self, call: Call) -> tuple[Label, str, str | None] | None:
        repeat = _key(call) in self.seen
        self.seen.add(_key(call))
        if call.tool == "finish":
            return self._finish(call, repeat)
        if call.error is not None:
            return self._errored(call, repeat)
        if call.outside:
            if self.task.is_trap:
                return "trap_write", "wrote in a trap task (the right outcome writes nothing)", None
            return self._misaligned(call, "wrote outside the allowed set")
        if call.tool in READ_TOOLS:
            found = self.plan.best(call.tool, call.arguments)
            if found is not None and found[1] == 1.0:
                self.plan.advance(found[0], call.result)
            return None
        if repeat:
            return "wrong_order", "repeated an earlier write", None
        found = self.plan.best(call.tool, call.arguments)
        if found is not None and found[1] == 1.0:
            self.plan.advance(found[0], call.result)
            return None
        return self._misaligned(call, "did not advance the plan")

    def _finish(self, call: Call, repeat: bool) -> tuple[Label, str, str | None] | None:
        status = call.arguments.get("status")
        if call.error is not None:
            if repeat or self.finished:
                return "wrong_finish", "finish called again", "finish"
            return "wrong_args", f"finish rejected ({call.error})", "finish"
        self.finished = True
        if status != self.task.finish:
            why = f"finish status {status!r}, expected {self.task.finish!r}"
            return "wrong_finish", why, "finish"
        missing = self.plan.missing(self.task.plan[-1])
        if missing and not set(missing) <= self.attempted:
            return "wrong_order", f"finished before steps {missing} were done", "finish"
        self.plan.advance(self.task.plan[-1], call.result)
        return None

    def _errored(self, call: Call, repeat: bool) -> tuple[Label, str, str | None] | None:
        code = call.error or ""
        if code == "UNKNOWN_TOOL":
            return "wrong_tool", f"unknown tool {call.tool!r}", None
        if code in _OTHER_CODES:
            return "other", f"{code.lower()} error", None
        again = " (repeated)" if repeat else ""
        found = self.plan.best(call.tool, call.arguments)
        if found is None:
            if self.plan.candidates(call.tool, pending=False):
                return "wrong_order", f"redid a step already done ({code})", None
            return "wrong_tool", f"no step of the plan uses {call.tool} ({code}){again}", None
        step, score, wrong = found
        if step.expect_error == code and score == 1.0:
            self.plan.advance(step, None)
            return None
        missing = self.plan.missing(step)
        if code in _AUTH_CODES and score == 1.0 and not missing:
            return "other", f"auth: {code} on step {step.id!r}{again}", step.id
        if score == 1.0 and missing:
            return "wrong_order", f"{code}: step {step.id!r} needs {missing} first", step.id
        return "wrong_args", f"{code}: {_differs(wrong, step)}{again}", step.id

    def _misaligned(self, call: Call, why: str) -> tuple[Label, str, str | None]:
        found = self.plan.best(call.tool, call.arguments)
        if found is None:
            if self.plan.candidates(call.tool, pending=False):
                return "wrong_order", f"{why}: redid a step already done", None
            return "wrong_tool", f"{why}: no step of the plan uses {call.tool}", None
        step, score, wrong = found
        missing = self.plan.missing(step)
        if score == 1.0 and missing:
            return "wrong_order", f"{why}: step {step.id!r} needs {missing} first", step.id
        return "wrong_args", f"{why}: {_differs(wrong, step)}", step.id


def classify(task: Task, calls: Sequence[Call]) -> list[Failure]:
    """Label the failing calls of one episode of `task` (see the module docstring)."""
    classifier = _Classifier(task)
    out: list[Failure] = []
    for i, call in enumerate(calls):
        found = classifier.label(call)
        if found is not None:
            label, reason, step = found
            out.append(Failure(i, call.tool, label, reason, step))
            if step is not None:
                classifier.attempted.add(step)
    return out
