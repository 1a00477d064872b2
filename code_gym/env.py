"""`CodeEnv`: a sandboxed Python workspace per session, graded by tests the agent cannot see.

Each instance owns one `Sandbox` (created at the first `reset`, emptied by the next, closed by
`close`). Tools (`code_gym.workspace`): `write_file`, `read_file`, `list_files`, `run_python`,
`run_tests`, and in simulation `submit`, which grades the submitted files in a fresh sandbox
(`code_gym.grading`) and ends the episode. Without a task the workspace is a plain sandboxed
Python scratchpad (production serving: Claude Code attaches it as an MCP server).

Example:
    >>> from mcpgym import CallToolAction
    >>> env = CodeEnv()
    >>> obs = env.reset(task_id="HumanEval/53")
    >>> obs.metadata["files"]
    ['solution.py', 'test_solution.py']
    >>> code = open_solution("HumanEval/53")  # the canonical solution, for the example
    >>> _ = env.step(CallToolAction(tool_name="write_file",
    ...                             arguments={"path": "solution.py", "content": code}))
    >>> final = env.step(CallToolAction(tool_name="submit"))
    >>> final.reward, final.done
    (1.0, True)
    >>> env.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Literal

from code_gym.errors import ERROR_MODES, CodeError, ErrorMode
from code_gym.grading import MAX_SUBMISSION_BYTES, MOUNT, RUNNER, Grade, agrade, grade
from code_gym.sandbox import Limits, Sandbox, SandboxBusy, SandboxUnavailable
from code_gym.tasks import CodeTask, get_task
from code_gym.taskset import CODE_TASKS, prompt
from code_gym.workspace import WorkspaceTools, busy
from mcpgym import Action, MCPEnvironment, Observation, State, tool
from mcpgym.errors import InvalidRequest

__all__ = ["RESET_OPTIONS", "REWARD_MODES", "CodeEnv", "CodeState", "open_solution"]

log = logging.getLogger(__name__)

RewardMode = Literal["fraction", "binary", "shaped"]
REWARD_MODES: tuple[RewardMode, ...] = ("fraction", "binary", "shaped")
RESET_OPTIONS = ("task", "error_mode", "reward", "hidden_note")
FREE_STEPS = 200
SHAPED_TESTS = 0.1
"""In `shaped` mode, the share of the reward paid for visible-test progress before `submit`."""


class CodeState(State):
    """Episode bookkeeping of a Code Gym session."""

    task: str | None = None
    error_mode: ErrorMode = "structured"
    reward_mode: RewardMode = "fraction"
    calls: int = 0
    runs: int = 0
    submitted: bool = False
    grade: dict[str, Any] | None = None


def open_solution(task_id: str) -> str:
    """The reference solution's file of a HumanEval task (for examples and the oracle)."""
    return get_task(task_id).solution["solution.py"]


class CodeEnv(WorkspaceTools, MCPEnvironment):
    """A Python workspace in a sandbox, with HumanEval and repository tasks.

    Reset options (all optional):
        task: the task to play (`HumanEval/0`..`HumanEval/163`, `repo/...`); also selected by
            `task_id=` or `split=` + `index=` (the task set, `CodeEnv.task_set`). Without one
            the workspace starts empty and `submit` has nothing to grade.
        error_mode: `structured` (default: failures as fields) or `plain` (text only).
        reward: `fraction` (default: the hidden-test reward at submit, see `code_gym.grading`),
            `binary` (1.0 only if every hidden test passes) or `shaped` (up to 0.1 for new
            visible tests passing before submit, the rest as 0.9 x the fraction at submit).
        hidden_note: an opaque string kept with the grader's data on the host; validators plant
            a canary here to prove that nothing a tool returns reaches what the grader holds.
    The episode ends at `submit` or at the task's step limit (the workspace is then graded as
    it stands). `seed` is accepted and changes nothing: tasks and grading are deterministic.
    """

    description = "A sandboxed Python workspace: write, run and test code; hidden tests grade it."
    version = "1.0.0"
    state_type = CodeState
    task_set = CODE_TASKS

    _state: CodeState  # pyright: ignore[reportIncompatibleVariableOverride]
    _sandbox: Sandbox | None = None
    _task: CodeTask | None = None
    _pending: float = 0.0
    _best_visible: float = 0.0
    _unavailable: str | None = None
    _defer_grade: bool = False
    _grade_due: bool = False
    """Why this episode's sandbox could not start (set by a task reset; the tools say it)."""

    def __init__(self, limits: Limits | None = None, sandbox_factory: Any = Sandbox) -> None:
        self.run_limits = limits
        self._factory = sandbox_factory
        self.error_mode: ErrorMode = "structured"

    @property
    def sandbox(self) -> Sandbox:  # type: ignore[override]
        """The session's sandbox (created at the first task reset or tool call)."""
        if self._sandbox is None:
            self._sandbox = self._new_sandbox()
        return self._sandbox

    def _new_sandbox(self) -> Sandbox:
        options: dict[str, Any] = {"limits": self.run_limits} if self.run_limits else {}
        if self._factory is Sandbox:  # keep the next run_python / run_tests sandbox started
            options["warm_mounts"] = {str(RUNNER): MOUNT}
        return self._factory(**options)

    # -- episode --------------------------------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        """Start an episode in an emptied workspace (see the class docstring)."""
        kwargs = self.task_set.resolve_reset(kwargs)
        unknown = [k for k in kwargs if k not in RESET_OPTIONS]
        if unknown:
            raise InvalidRequest(
                f"unknown reset option(s) {unknown}; known: {', '.join(RESET_OPTIONS)}",
                errors=[{"field": k, "expected": list(RESET_OPTIONS)} for k in unknown],
            )
        mode = kwargs.get("error_mode", "structured")
        if mode not in ERROR_MODES:
            raise InvalidRequest(
                f"error_mode must be one of {', '.join(ERROR_MODES)}; got {mode!r}",
                errors=[{"field": "error_mode", "got": str(mode)}],
            )
        reward_mode = kwargs.get("reward", "fraction")
        if reward_mode not in REWARD_MODES:
            raise InvalidRequest(
                f"reward must be one of {', '.join(REWARD_MODES)}; got {reward_mode!r}",
                errors=[{"field": "reward"}],
            )
        task: CodeTask | None = None
        if kwargs.get("task") is not None:
            try:
                task = get_task(str(kwargs["task"]))
            except KeyError as exc:
                raise InvalidRequest(
                    str(exc.args[0]), errors=[{"field": "task", "got": str(kwargs["task"])}]
                ) from None
        super().reset(seed=seed, episode_id=episode_id)
        files: list[str] = []
        self._unavailable = None
        if task is not None or self._sandbox is not None:
            # a task-less episode (production's reset at start-up) starts its sandbox at the
            # first tool call: a server without bubblewrap still starts and says why it cannot run
            try:
                sandbox = self.sandbox
            except SandboxUnavailable as exc:
                # the episode starts (its prompt is shown); every tool answers why it cannot run
                self._unavailable = str(exc)
            else:
                sandbox.reset()
                for path, text in (task.files if task else {}).items():
                    sandbox.write_file(path, text)
                files = sorted(str(p) for p in sandbox.list_files())
        self._task, self.error_mode = task, mode
        self._pending, self._best_visible = 0.0, 0.0
        self._hidden_note = kwargs.get("hidden_note")
        self._state = CodeState(  # pyright: ignore[reportIncompatibleVariableOverride]
            episode_id=self._state.episode_id,
            task=task.id if task else None,
            error_mode=mode,
            reward_mode=reward_mode,
        )
        meta: dict[str, Any] = {
            "error_mode": mode,
            "reward": reward_mode,
            "files": files,
        }
        if self._unavailable is not None:
            meta["sandbox_unavailable"] = self._unavailable
        if task is not None:
            meta.update(task=task.id, kind=task.kind, prompt=prompt(task), max_steps=task.max_steps)
        return Observation(metadata=meta)

    def close(self) -> None:
        """Close the sandbox: its workspace is removed and every process it started ends."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    @property
    def max_steps(self) -> int:
        """The step limit of the episode (the task's, or a generous one without a task)."""
        return self._task.max_steps if self._task else FREE_STEPS

    async def _abegin(self, tool: str) -> None:
        """`_begin` for async tools: a first sandbox starts in a worker thread (its start-up
        probe runs a process), not on the event loop."""
        if self._sandbox is None and self._unavailable is None and not self._state.submitted:
            with contextlib.suppress(SandboxUnavailable):  # _begin renders it
                self._sandbox = await asyncio.to_thread(self._new_sandbox)
        self._begin(tool)

    def _begin(self, tool: str) -> None:
        st = self._state
        if st.submitted or st.calls >= self.max_steps:
            why = "submit was already called" if st.submitted else "the step limit was reached"
            raise self._fail(
                tool,
                CodeError(
                    "EPISODE_OVER",
                    f"The episode is over: {why}.",
                    hint="Nothing more to do; reset for a new episode.",
                ),
            )
        if self._sandbox is None:
            try:
                if self._unavailable is not None:  # the reset found it so: never run unsandboxed
                    raise SandboxUnavailable(self._unavailable)
                self._sandbox = self._new_sandbox()
            except SandboxUnavailable as exc:
                raise self._fail(
                    tool,
                    CodeError(
                        "SANDBOX_UNAVAILABLE",
                        f"The sandbox cannot start here: {exc}",
                        hint="This is the server's fault, not your call's.",
                    ),
                ) from None
        st.calls += 1
        if tool.startswith("run_"):
            st.runs += 1

    async def astep(
        self, action: Any, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        """`MCPEnvironment.astep`; a step that reaches the step limit is graded here, awaited,
        so that grading (a sandbox run) never blocks the server's event loop in `reward`."""
        self._defer_grade = True
        try:
            obs = await super().astep(action, timeout_s, **kwargs)
        finally:
            self._defer_grade = False
        if self._grade_due:
            self._grade_due = False
            assert self._task is not None
            files = self._submitted_files()
            try:
                graded = await agrade(self._task, files, sandbox_factory=self._factory)
            except SandboxBusy:  # the episode is over: wait in a thread for a slot once more
                graded = await asyncio.to_thread(
                    grade, self._task, files, sandbox_factory=self._factory
                )
            self._record(graded)
            value, self._pending = self._pending, 0.0
            obs.reward = (obs.reward or 0.0) + value
            obs.metadata.update(grade=self._state.grade, success=graded.binary == 1.0)
        return obs

    def reward(self, action: Action, observation: Observation) -> float | None:
        """The step's reward: the grade at submit (or at the step limit), shaped extras."""
        st = self._state
        if not st.submitted and self._task is not None and st.calls >= self.max_steps:
            observation.done = True
            if self._defer_grade and not self._grade_due:  # `astep` grades it, awaited
                self._grade_due = True
                self.end_episode()
                value, self._pending = self._pending, 0.0
                return value
            if not self._grade_due:
                self._finish()  # the step limit: grade the workspace as it stands
        if st.grade is not None and observation.done:
            observation.metadata.update(grade=st.grade, success=st.grade["binary"] == 1.0)
        value, self._pending = self._pending, 0.0
        return value

    # -- grading --------------------------------------------------------------------------------

    def _submitted_files(self) -> dict[str, str]:
        assert self._task is not None
        files = {}
        for path in self.sandbox.list_files():
            rel = str(path)
            if self._task.submitted({rel: ""}):
                try:
                    files[rel] = self.sandbox.read_file(rel, max_bytes=MAX_SUBMISSION_BYTES)
                except (OSError, ValueError, UnicodeDecodeError):
                    continue  # an unreadable file is simply not submitted
        return files

    def _finish(self) -> Grade:
        """Grade the workspace now (the step limit: called from `reward`, off the tools)."""
        assert self._task is not None
        return self._record(
            grade(self._task, self._submitted_files(), sandbox_factory=self._factory)
        )

    def _record(self, result: Grade) -> Grade:
        st = self._state
        st.submitted, st.grade = True, result.to_dict()
        value = {"fraction": result.reward, "binary": result.binary}.get(st.reward_mode)
        if value is None:  # shaped: the test-progress share was paid along the way
            value = (1 - SHAPED_TESTS) * result.reward
            if result.reward == 0:  # ... and is paid back when the hidden tests give nothing:
                value -= SHAPED_TESTS * self._best_visible  # visible tests can be edited or
                # forged from inside the sandbox, so a gamer's return stays 0
        self._pending += value
        self.end_episode()
        return result

    def after_tests(self, result: dict[str, Any]) -> None:
        """Shaped reward: pay for visible tests passing that never passed before."""
        if self._state.reward_mode != "shaped" or not result.get("total"):
            return
        fraction = result["passed"] / result["total"]
        if fraction > self._best_visible:
            self._pending += SHAPED_TESTS * (fraction - self._best_visible)
            self._best_visible = fraction

    @tool(mode="simulation")
    async def submit(self) -> dict[str, Any]:
        """Submit the workspace: hidden tests grade the task's files and the episode ends."""
        await self._abegin("submit")
        if self._task is None:
            self._state.calls -= 1
            raise self._fail(
                "submit",
                CodeError(
                    "NO_TASK",
                    "This episode has no task to grade.",
                    hint="reset(task_id=...) to play a task.",
                ),
            )
        assert self._task is not None
        files = self._submitted_files()
        try:
            graded = await agrade(self._task, files, sandbox_factory=self._factory)
        except SandboxBusy as exc:  # not graded: the episode goes on, the call is not counted
            self._state.calls -= 1
            raise self._fail("submit", busy(exc)) from None
        result = self._record(graded)
        out: dict[str, Any] = {
            "reward": result.reward,
            "passed": result.passed,
            "total": result.total,
            "episodeDone": True,
        }
        if self.error_mode == "structured":
            out.update(
                files=result.files,
                failures=result.failures,
                killed=result.killed,
                constant_answers=result.constant,
            )
        return out
