"""`TaskEpisode`: what `CalendarEnv` keeps about an episode played on a task.

It snapshots the seed state at reset, logs every tool call (its error code whatever the error
mode, its result, whether it wrote), attributes each write's changes to the call that made them
(so the classifier knows which calls wrote outside the allowed set), and grades on demand. Grading
is cheap: the snapshot after the latest write is kept, so a grade is a diff and a few row scans,
recomputed only when a call happened since the last one.

Example:
    >>> from calendar_gym.world.store import Store
    >>> from calendar_gym.tasks import load_suite
    >>> task = load_suite().get("t1-create-haircut")
    >>> ep = TaskEpisode(task, Store.create(now=task.now))
    >>> ep.record("settings_get", {"setting": "now"}, result={"value": "..."})
    >>> ep.metadata(finish_status=None)["success"], len(ep.calls)
    (False, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from calendar_gym.tasks.classify import Call, Failure, classify, counts
from calendar_gym.tasks.grading import Grade, allowed, grade, held_on_seed
from calendar_gym.tasks.model import Task
from calendar_gym.tasks.snapshot import ChangeLog, Snapshot, diff, snapshot
from calendar_gym.world.store import Store

__all__ = ["TaskEpisode"]

_SEEDS: dict[tuple[str, str, str], tuple[Snapshot, list[bool]]] = {}


def _seed_state(task: Task, store: Store) -> tuple[Snapshot, list[bool]]:
    """The seed state of `task` and which assertions hold on it, computed once per process
    (the same for every seed: generated ids only appear on writes)."""
    key = (task.suite, task.id, store.world_version)
    found = _SEEDS.get(key)
    if found is None:
        seed = snapshot(store)
        found = _SEEDS[key] = (seed, held_on_seed(task, seed))
    return found


class TaskEpisode:
    """Call log, write attribution and grading for one episode of `task` on `store`."""

    def __init__(
        self, task: Task, store: Store, reference: Callable[[], Snapshot | None] | None = None
    ) -> None:
        self.task = task
        self._reference = reference
        self.store = store
        self.seed, self._before = _seed_state(task, store)
        self._log = ChangeLog(store)
        self.current = self.seed
        self.calls: list[Call] = []
        self._cache: tuple[int, str | None, Grade, list[Failure]] | None = None

    def record(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        *,
        result: Any = None,
        error: str | None = None,
        wrote: bool = False,
    ) -> None:
        """Log one call; after a write, snapshot the world and check the write's changes."""
        outside = False
        if wrote:
            after = self._log.refresh(self.current)
            outside = any(not allowed(self.task, c, after) for c in diff(self.current, after))
            self.current = after
        args = dict(arguments) if isinstance(arguments, dict) else {}
        self.calls.append(Call(tool, args, error, result, wrote, outside))

    def _graded(self, finish_status: str | None) -> tuple[Grade, list[Failure]]:
        key = (len(self.calls), finish_status)
        if self._cache is None or self._cache[:2] != key:
            g = grade(
                self.task,
                self.seed,
                self.current,
                finish_status=finish_status,
                calls=self.calls,
                before=self._before,
                reference=self._reference() if self._reference is not None else None,
            )
            self._cache = (*key, g, classify(self.task, self.calls))
        return self._cache[2], self._cache[3]

    def grade(self, finish_status: str | None) -> Grade:
        """The grade of the state and calls so far."""
        return self._graded(finish_status)[0]

    def failures(self, finish_status: str | None) -> list[Failure]:
        """The classifier's labels for the calls so far."""
        return self._graded(finish_status)[1]

    def metadata(self, finish_status: str | None) -> dict[str, Any]:
        """What the final observation carries: `task`, `tier`, `success`, `grade`, `failures`,
        `failure_counts` (the task's id and tier only now: at reset they would tell a trap from
        its twin)."""
        g, failures = self._graded(finish_status)
        return {
            "task": self.task.id,
            "tier": self.task.tier,
            "success": g.success,
            "grade": g.model_dump(mode="json"),
            "failures": [f.as_dict() for f in failures],
            "failure_counts": counts(failures),
        }
