"""`NaiveAgent`: a deterministic, rule-based baseline that shows the benchmark's effects without a
model.

It does not read English. It is handed the task's literal request — the writes the prompt asks
for, with entity references — and resolves those references only as far as the phrasing allows
(`calendar_gym.agents.lookup`): ids as given in the explicit phrasing; in the natural one, the
first name match for calendars, people and events, and wall times without an offset. When a call
fails it retries once with the error's `example`/`suggestion` (`calendar_gym.agents.retry`),
which only structured errors carry. It never questions a request: when everything it tried
worked it finishes `done`, when it could not resolve something or a call still failed it finishes
`cannot_complete`; it never asks for clarification.

So, by construction: explicit phrasing succeeds except on ambiguity traps; the natural phrasing
loses the tasks where the first name match is wrong or the error's example quotes the wrong
zone; plain errors lose every natural-phrasing task that needs a time (no example to retry with).

Example:
    >>> from mcpgym.harness.eval.runner import run_evaluation
    >>> from calendar_gym import CalendarEnv
    >>> from calendar_gym.suite import specs
    >>> result = run_evaluation(CalendarEnv, NaiveAgent(),
    ...     specs("2", tasks=["t1-create-haircut"], phrasings=["natural"]))
    >>> [r.success for r in result.records]   # structured errors: fixed; plain: not
    [True, False]
"""

from __future__ import annotations

from typing import Any

from calendar_gym.agents.common import Play, PlayEpisode, call, outcome, task_of
from calendar_gym.agents.lookup import Lookup, Unresolved
from calendar_gym.agents.retry import fixed_arguments
from calendar_gym.tasks.model import Phrasing, Task
from mcpgym.harness.episodes import EpisodeSpec
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = ["NaiveAgent", "naive_play", "substitute"]


def substitute(value: Any, lookup: Lookup, results: dict[str, Any]) -> Any:
    """Resolve `$e` (through `lookup`, which may call tools) and `$from` in `value`."""
    if isinstance(value, dict):
        if "$e" in value and len(value) == 1:
            return (yield from lookup.value(str(value["$e"])))
        if "$from" in value and len(value) == 1:
            step, _, path = str(value["$from"]).partition(".")
            found: Any = results.get(step)
            for part in path.split(".") if path else []:
                found = found.get(part) if isinstance(found, dict) else None
            if found is None:
                raise Unresolved(f"no result for {value['$from']}")
            return found
        out = {}
        for k, v in value.items():
            out[k] = yield from substitute(v, lookup, results)
        return out
    if isinstance(value, list):
        items = []
        for v in value:
            items.append((yield from substitute(v, lookup, results)))
        return items
    return value


def naive_play(
    task: Task,
    phrasing: Phrasing,
    first: StepResult[Observation],
    *,
    exact_times: bool = False,
    retry: bool = True,
    lookup: Lookup | None = None,
) -> Play:
    """The naive baseline's episode of `task` (see the module docstring); `exact_times` and
    `retry=False` make it the `first-match` agent."""
    now = str(first.observation.metadata.get("now") or task.now)
    lookup = lookup or Lookup(task, phrasing, now, exact_times=exact_times)
    results: dict[str, Any] = {}
    status, summary = "done", "Done."
    for step in task.literal_request():
        try:
            args = yield from substitute(step.args, lookup, results)
        except Unresolved as why:
            status, summary = "cannot_complete", f"Could not find what to change: {why}."
            break
        result = yield call(step.tool, args)
        value, error = outcome(result)
        if error is not None and retry:
            fixed = fixed_arguments(args, error)
            if fixed is not None:
                result = yield call(step.tool, fixed)
                value, error = outcome(result)
        if result.done:
            return
        if error is not None:
            status, summary = "cannot_complete", f"{step.tool} failed: {error.get('message')}"
            break
        results[step.id] = value
    yield call("finish", {"status": status, "summary": summary})


class NaiveAgent:
    """The rule-based baseline (see the module docstring)."""

    name = "naive"

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> PlayEpisode:
        task, phrasing = task_of(spec)

        def make(first: StepResult[Observation]) -> Play:
            return naive_play(task, phrasing, first)

        return PlayEpisode(make)
