"""`TaskPlay`: the part of `CalendarEnv` that plays a task of the suite.

With the reset option `task`, the task fixes the acting user, scopes, frozen "now" and seed patch
(`task_options`); every tool call is logged for grading (`record_call`); the episode ends at
`finish` or at the task's step limit, whichever comes first — the environment enforces the limit
itself, so an episode that runs out of steps is graded like one that finished. At the end the
framework applies `calendar_gym.tasks.grading.TASK_RUBRIC` (the reward) and the final observation's
metadata carries `success`, `grade`, `failures` and `failure_counts`. At any time,
`task_grade()` gives the grade so far (operator-only: `state` never carries it).

A mixin: it comes before `MCPEnvironment` in `CalendarEnv`'s bases, so its `step`/`astep`/`state`
wrap the framework's.

Example:
    >>> from mcpgym import CallToolAction
    >>> from calendar_gym import CalendarEnv
    >>> env = CalendarEnv()
    >>> _ = env.reset(task="t1-create-haircut")
    >>> obs = env.step(CallToolAction(tool_name="finish",
    ...     arguments={"status": "done", "summary": "nothing"}))
    >>> obs.done, obs.reward, obs.metadata["success"], obs.metadata["failure_counts"]["wrong_order"]
    (True, 0.0, False, 1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from calendar_gym.tasks.episode import TaskEpisode
from calendar_gym.tasks.grading import TASK_RUBRIC, Grade
from calendar_gym.tasks.loader import LATEST, VERSIONS, get_task
from calendar_gym.tasks.model import Task
from calendar_gym.tasks.reference import reference_state
from calendar_gym.world.store import Store
from mcpgym.errors import InvalidRequest
from mcpgym.types import CallToolAction, ListToolsAction, Observation, State

if TYPE_CHECKING:
    from mcpgym.mcp_env import MCPEnvironment

    _Base = MCPEnvironment
else:
    _Base = object

__all__ = ["TASK_FIXES", "TaskPlay"]

TASK_FIXES = ("user", "scopes", "now", "seed_patch", "world_version", "shared_world")
"""Reset options a task decides; passing them together with `task` is an error."""


class TaskPlay(_Base):
    """Task episodes for `CalendarEnv` (see the module docstring)."""

    _task: TaskEpisode | None = None
    _over_limit: bool = False
    suite_version: str = LATEST
    order_salt: str = ""

    @staticmethod
    def task_options(task_id: str, options: dict[str, Any]) -> dict[str, Any]:
        """`options` completed with what task `task_id` fixes (who, when, which world)."""
        fixed = [k for k in TASK_FIXES if k in options]
        if fixed:
            raise InvalidRequest(
                f"reset option(s) {fixed} cannot be combined with task: the task fixes them",
                errors=[{"field": k} for k in fixed],
            )
        try:
            task = get_task(task_id, str(options.get("suite", LATEST)))
        except (KeyError, ValueError) as exc:
            raise InvalidRequest(f"invalid task: {exc}", errors=[{"field": "task"}]) from None
        return {
            **options,
            "user": task.user,
            "scopes": task.scopes,
            "now": task.now,
            "seed_patch": task.seed_patch,
        }

    def start_task(self, options: dict[str, Any], store: Store) -> Task | None:
        """Begin the task named in the reset `options` (if any) on the fresh `store`."""
        task_id = options.get("task")
        suite = str(options.get("suite", LATEST))
        if suite not in VERSIONS:
            raise InvalidRequest(
                f"unknown suite version {suite!r}; known: {', '.join(VERSIONS)}",
                errors=[{"field": "suite", "got": suite, "expected": list(VERSIONS)}],
            )
        self.suite_version = suite  # the rules of this suite version apply to every call
        task = get_task(str(task_id), suite) if task_id else None
        seeded = task is not None and suite not in ("1", "2")
        self.order_salt = f"{store.seed}/{task.id}" if seeded and task is not None else ""
        store.order_salt = self.order_salt  # the hints of not-found errors list in this order
        self._task = None
        if task is not None:
            make = type(self)
            self._task = TaskEpisode(task, store, lambda: reference_state(make, task))
        self._over_limit = False
        self.rubric = TASK_RUBRIC if task is not None else None
        return task

    @property
    def task_episode(self) -> TaskEpisode | None:
        """The episode's task bookkeeping (call log, snapshots), if it plays a task."""
        return self._task

    @property
    def over_limit(self) -> bool:
        """Whether the task's step limit has ended the episode (later calls are refused)."""
        return self._over_limit

    def record_call(self, name: str, arguments: Any, **outcome: Any) -> None:
        """Log one tool call for grading (`result=`, `error=` code, `wrote=`)."""
        if self._task is not None:
            self._task.record(name, arguments, **outcome)

    # -- the episode's end -----------------------------------------------------------------------

    def step(
        self, action: ListToolsAction | CallToolAction, timeout_s: float | None = None, **kw: Any
    ) -> Observation:
        """Apply one action; a task episode also ends (graded) at the task's step limit."""
        last = self._arm_limit()
        obs = super().step(action, timeout_s, **kw)
        return self._graded(obs, last)

    async def astep(
        self, action: ListToolsAction | CallToolAction, timeout_s: float | None = None, **kw: Any
    ) -> Observation:
        """`step` for async callers (servers and the evaluation runner)."""
        last = self._arm_limit()
        obs = await super().astep(action, timeout_s, **kw)
        return self._graded(obs, last)

    def _arm_limit(self) -> bool:
        """Whether this step is the task's last allowed one (then the episode ends with it)."""
        if self._task is None or self._done or not self._started:
            return False
        if self._state.step_count + 1 >= self._task.task.max_steps:
            self.end_episode()  # read by the framework after the call: this step is `done`
            return True
        return False

    def _graded(self, obs: Observation, last: bool) -> Observation:
        if last:
            self._over_limit = True
        if self._task is not None and obs.done:
            obs.metadata.update(self._task.metadata(self._finish_status()))
        return obs

    def _finish_status(self) -> str | None:
        return getattr(self._state, "finish_status", None)

    # -- reading the grade -----------------------------------------------------------------------

    def task_grade(self) -> Grade | None:
        """The grade of the task episode so far (None without a task)."""
        if self._task is None:
            return None
        return self._task.grade(self._finish_status())

    def task_metadata(self) -> dict[str, Any] | None:
        """What the final observation carries, for the state so far (None without a task)."""
        if self._task is None:
            return None
        return self._task.metadata(self._finish_status())

    @property
    def state(self) -> State:
        """The episode's bookkeeping. It carries no grade: the grade holds the task's expected
        values, and the state is what an agent, its harness and the web UI's player see (the
        operator reads `task_grade()` in process, the final metadata, or `regrade`)."""
        return super().state
