"""The gold plan as a play, and the reference final state it reaches (what graders compare to).

`plan_play(task)` yields the gold plan's calls one by one (entity references become their true
values, `{"$from": "step.path"}` reads an earlier step's result) and receives each call's
`StepResult`; the `oracle` agent is this play. `reference_state(make_env, task)` plays it on a
fresh in-process environment and returns the normalised final snapshot, cached per process and
task: the collateral guard (`calendar_gym.tasks.collateral`) compares every row an episode
touched with it. The environment class is passed in (`type(env)`), so this module imports no
environment.

Example:
    >>> from calendar_gym.tasks import load_suite
    >>> play = plan_play(load_suite().get("t1-create-haircut"))
    >>> next(play)["tool_name"]
    'events_insert'
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from calendar_gym.tasks.model import Task
from calendar_gym.tasks.snapshot import Snapshot, snapshot
from calendar_gym.tasks.values import ANY, entity_value, resolve
from mcpgym.types import CallToolAction, Observation, StepResult

__all__ = ["PlanPlay", "outcome", "plan_play", "reference_state"]

PlanPlay = Generator[dict[str, Any], StepResult[Observation], None]
"""A play: yields call actions (wire form), receives their results."""

_REFERENCE: dict[tuple[str, str, str], Snapshot] = {}
_BUILDING: set[tuple[str, str, str]] = set()


def outcome(result: StepResult[Observation]) -> tuple[Any, dict[str, Any] | None]:
    """A call's result and its error (`{"error_type", "message", "error": {...}}`), one None."""
    obs = result.observation
    error = getattr(obs, "error", None)
    if error is not None:
        dump = getattr(error, "model_dump", None)
        return None, dump(mode="json") if callable(dump) else dict(error)
    return getattr(obs, "result", None), None


def _has_any(value: Any) -> bool:
    if value is ANY:
        return True
    if isinstance(value, dict):
        return any(_has_any(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_any(v) for v in value)
    return False


def plan_play(task: Task) -> PlanPlay:
    """The gold plan as a play (stops early if the environment ends the episode)."""
    results: dict[str, Any] = {}
    for step in task.plan:
        args = resolve(step.args, lambda ref: entity_value(task, ref), results)
        if _has_any(args):
            raise RuntimeError(f"{task.id}: step {step.id} refers to a result it does not have")
        result = yield {"type": "call_tool", "tool_name": step.tool, "arguments": args}
        value, error = outcome(result)
        if error is None:
            results[step.id] = value
        if result.done:
            return


def reference_state(make_env: Callable[[], Any], task: Task) -> Snapshot | None:
    """The final state the gold plan of `task` reaches (seed 0), cached per process (None while
    it is being played: the reference episode itself is graded without a reference)."""
    key = (task.suite, task.id, task.now)
    found = _REFERENCE.get(key)
    if found is not None or key in _BUILDING:
        return found
    env = make_env()
    _BUILDING.add(key)
    try:
        env.reset(seed=0, task=task.id, suite=task.suite, error_mode="structured")
        play = plan_play(task)
        action = next(play, None)
        while action is not None:
            obs = env.step(CallToolAction(tool_name=action["tool_name"],
                                          arguments=action["arguments"]))  # fmt: skip
            if obs.done and action["tool_name"] == "finish":
                break
            try:
                action = play.send(StepResult(observation=obs, reward=obs.reward, done=obs.done))
            except StopIteration:
                break
        episode = env.task_episode
        found = _REFERENCE[key] = episode.current if episode is not None else snapshot(env.store)
    finally:
        _BUILDING.discard(key)
        env.close()
    return found
