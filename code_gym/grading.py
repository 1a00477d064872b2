"""Grading a submission: its files alone in a fresh sandbox, the verdict on the host.

`grade(task, files)` copies the submitted files (`CodeTask.submitted`) into a new `Sandbox`
that holds nothing else, runs the grading driver (`code_gym/runner/driver.py`) to answer the
calls the hidden tests make (recorded once with the reference solution, `code_gym.checks`), and
judges the answers on the host, where the tests are. The sandbox is closed at once (every
process it started dies with it). What the submission prints, its exit code and anything it
writes count for nothing: only its answers, decoded as plain values, are judged.

Reward (`Grade.reward`, in [0, 1]):
- the hidden tests split into *fix* tests (the starting code fails them) and *regression*
  tests (the starting code already passes them: a stub's `None`, an untouched package's working
  functions): reward = fix tests passed / fix tests x regression tests passed / regression
  tests, so the untouched workspace scores 0 and breaking what worked costs; a hidden test
  whose every call the visible tests make (its answer was shown) counts as a regression test;
- answers that do not depend on the input (one constant for every call, where the reference's
  answers vary) score 0;
- credit for the fix tests starts above what an input-blind answer earns: with F fix tests of
  which T pass for the best single constant (the reference's most frequent answers and None)
  or a handed-back argument, and one more for luck (`BLIND_SLACK`), fix credit =
  max(0, passed - T - 1) / (F - T - 1); where that leaves no fix test, only passing every
  test counts (1.0, else 0); so a constant for every call but one earns nothing either;
- `Grade.binary` is 1.0 only when every hidden test passes (pass@1 style).

Example:
    >>> from code_gym.tasks import get_task
    >>> task = get_task("HumanEval/53")
    >>> sorted(baseline_steps(task))  # the stub (returns None) passes none of add's tests
    []
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import code_gym.runner
from code_gym.checks import Recording, Verdict, judge
from code_gym.runner.wire import decode, encode
from code_gym.sandbox import Limits, RunResult, Sandbox
from code_gym.tasks import CodeTask, call_key, get_task

__all__ = [
    "GRADE_LIMITS",
    "MOUNT",
    "RUNNER",
    "Grade",
    "agrade",
    "baseline_steps",
    "grade",
    "score",
    "trivial_fix_tests",
]

RUNNER = Path(code_gym.runner.__file__).resolve().parent
"""The sandbox-side programs, mounted read-only at `MOUNT` in every run."""
MOUNT = "/codegym"
GRADE_LIMITS = Limits(
    cpu_s=10,
    wall_s=15,
    memory_mb=512,
    processes=32,
    file_size_mb=4,
    output_bytes=4_000_000,
    workspace_mb=16,
)
CALL_TIMEOUT_S = 1.0
TRIVIAL_CONSTANTS = 8
"""How many of the reference's most frequent answers (and argument positions) the input-blind
baseline tries, besides None."""
BLIND_SLACK = 1
"""Tests above the blind floor that earn nothing yet: one call answered otherwise (a junk
string that happens to be truthy where True is expected) can pass one more test by luck."""
MAX_SUBMISSION_BYTES = 1_000_000


@dataclass
class Grade:
    """The outcome of grading one submission (see the module docstring for `reward`)."""

    reward: float
    binary: float
    passed: int
    total: int
    fix_passed: int
    fix_total: int
    regression_passed: int
    regression_total: int
    constant: bool = False
    failures: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    answered: int = 0
    calls: int = 0
    killed: str | None = None
    duration_s: float = 0.0
    files: list[str] = field(default_factory=list[str])

    def to_dict(self) -> dict[str, Any]:
        """The grade as JSON data, without `duration_s` (the same submission gets the same
        dict: observations stay deterministic)."""
        out = asdict(self)
        del out["duration_s"]
        return out


def local_answers(
    recording: Recording, functions: Mapping[str, Callable[..., Any]]
) -> list[dict[str, Any]]:
    """The driver's answer lines for trusted code run here on the host (the starting code)."""
    out: list[dict[str, Any]] = []
    for i, (target, args, kwargs) in enumerate(recording.calls):
        fn = functions.get(target)
        try:
            if fn is None:
                raise AttributeError(target)
            out.append({"i": i, "ok": encode(fn(*decode(args), **decode(kwargs)))})
        except Exception as exc:
            out.append({"i": i, "raised": type(exc).__name__, "message": str(exc)[:300]})
    return out


@functools.cache
def _baseline(task_id: str) -> frozenset[int]:
    task = get_task(task_id)
    rec = task.recording()
    return judge(rec, local_answers(rec, task.baseline()), seed=task.id).passed_steps


def baseline_steps(task: CodeTask) -> frozenset[int]:
    """The hidden tests the starting code already passes (the regression tests)."""
    return _baseline(task.id)


@functools.cache
def _shown(task_id: str) -> frozenset[int]:
    task = get_task(task_id)
    rec, seen = task.recording(), task.shown_calls()
    out = set()
    for step in rec.steps:
        calls = [rec.calls[i] for i in rec.step_calls[step.index]]
        keys = [
            (t.rpartition(":")[2].rpartition(".")[2], call_key(decode(a), decode(k)))
            for t, a, k in calls
        ]
        if step.counts and keys and all(key in seen for key in keys):
            out.add(step.index)
    return frozenset(out)


def shown_steps(task: CodeTask) -> frozenset[int]:
    """The hidden tests whose every call the visible tests make too (their answers were shown)."""
    return _shown(task.id)


def _split_steps(task: CodeTask) -> tuple[frozenset[int], frozenset[int]]:
    """(fix tests, regression tests) of the task (see the module docstring)."""
    counted = {s.index for s in task.recording().steps if s.counts}
    regression = counted & baseline_steps(task)
    # a hidden test the visible tests already answer is required, not credited: hard-coding
    # the shown examples earns nothing (unless every test was shown)
    shown = (counted & shown_steps(task)) - regression
    if counted - regression - shown:
        regression = regression | shown
    return frozenset(counted - regression), frozenset(regression)


@functools.cache
def _trivial(task_id: str) -> int:
    """The most fix tests one input-blind answer passes: one constant for every call (the
    reference's most frequent answers, and None) or one argument handed back."""
    task = get_task(task_id)
    rec = task.recording()
    fix, _regression = _split_steps(task)
    common = [v for v, _n in Counter(rec.reference_answers).most_common(TRIVIAL_CONSTANTS)]
    plans = [[value for _ in rec.calls] for value in map(_decoded, common) if value is not None]
    plans.append([encode(None) for _ in rec.calls])
    widths = [
        len(args[1]) if isinstance(args, list) and len(args) == 2 else 0
        for _t, args, _k in rec.calls
    ]
    for p in range(min(min(widths, default=0), TRIVIAL_CONSTANTS)):
        plans.append([args[1][p] for _t, args, _k in rec.calls])
    best = 0
    for plan in plans:
        lines = [{"i": i, "ok": ok} for i, ok in enumerate(plan)]
        best = max(best, len(fix & judge(rec, lines, seed=task.id).passed_steps))
    return best


def _decoded(canon: str) -> Any:
    """A reference answer's wire form (None for what is no value: "raised ...", a type)."""
    try:
        return json.loads(canon)
    except ValueError:
        return None


def trivial_fix_tests(task: CodeTask) -> int:
    """How many fix tests an answer that ignores the input can pass (credited above it only)."""
    return _trivial(task.id)


def score(task: CodeTask, verdict: Verdict) -> Grade:
    """The grade of a verdict (see the module docstring)."""
    fix, regression = _split_steps(task)
    fix_passed = len(fix & verdict.passed_steps)
    reg_passed = len(regression & verdict.passed_steps)
    # credit starts above what an input-blind answer gets: a constant (or an echoed argument)
    # for all calls but one cannot collect the tests the constant alone passes; where a blind
    # answer (and luck) passes every fix test, only passing every test counts
    floor = _trivial(task.id) + BLIND_SLACK if fix else 0
    if len(fix) > floor:
        reward = max(0, fix_passed - floor) / (len(fix) - floor)
    else:
        reward = 1.0 if fix and fix_passed + reg_passed == len(fix) + len(regression) else 0.0
    if regression:
        reward *= reg_passed / len(regression)
    if verdict.constant:
        reward = 0.0
    full = not verdict.constant and verdict.passed == verdict.total and verdict.total > 0
    return Grade(
        reward=round(reward, 6),
        binary=1.0 if full else 0.0,
        passed=verdict.passed,
        total=verdict.total,
        fix_passed=fix_passed,
        fix_total=len(fix),
        regression_passed=reg_passed,
        regression_total=len(regression),
        constant=verdict.constant,
        failures=verdict.failures,
    )


def parse_answers(stdout: str) -> list[dict[str, Any]]:
    """The driver's answer lines (anything else in the output is ignored)."""
    out: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: a line nested too deep
            continue
        if isinstance(item, dict) and isinstance(item.get("i"), int):
            out.append(item)
    return out


def grade(
    task: CodeTask,
    files: Mapping[str, str],
    *,
    sandbox_factory: Callable[..., Sandbox] = Sandbox,
    limits: Limits = GRADE_LIMITS,
) -> Grade:
    """Grade the submitted `files` (workspace path → text) of `task` in a fresh sandbox."""
    job = _Job(task, files)
    if job.submitted:
        sandbox = job.open(sandbox_factory, limits)
        try:
            job.take(sandbox.run(*job.argv, **job.options(limits)))
        finally:
            sandbox.close()
    return job.result()


async def agrade(
    task: CodeTask,
    files: Mapping[str, str],
    *,
    sandbox_factory: Callable[..., Sandbox] = Sandbox,
    limits: Limits = GRADE_LIMITS,
) -> Grade:
    """`grade` for the event loop: the sandbox run is awaited, set-up and teardown (which wait
    for processes) run in a worker thread, so other sessions go on meanwhile."""
    job = _Job(task, files)
    if job.submitted:
        sandbox = await asyncio.to_thread(job.open, sandbox_factory, limits)
        try:
            job.take(await sandbox.arun(*job.argv, **job.options(limits)))
        finally:
            await asyncio.to_thread(sandbox.close)
    return job.result()


class _Job:
    """One grading: the files that count, the driver's request, and the verdict."""

    argv = (["python", "-I", f"{MOUNT}/driver.py"],)

    def __init__(self, task: CodeTask, files: Mapping[str, str]) -> None:
        self.started = time.monotonic()
        self.task, self.recording = task, task.recording()
        submitted = task.submitted(dict(files))
        size = sum(len(t.encode("utf-8")) for t in submitted.values())
        self.files = sorted(submitted)
        self.submitted = submitted if size <= MAX_SUBMISSION_BYTES else {}
        self.answers: list[dict[str, Any]] = []
        self.killed: str | None = None

    def open(self, factory: Callable[..., Sandbox], limits: Limits) -> Sandbox:
        sandbox = factory(limits=limits)
        try:
            for path, text in self.submitted.items():
                sandbox.write_file(path, text)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def options(self, limits: Limits) -> dict[str, Any]:
        request = json.dumps({"calls": self.recording.calls, "call_timeout_s": CALL_TIMEOUT_S})
        return {"stdin": request, "limits": limits, "ro_mounts": {str(RUNNER): MOUNT}}

    def take(self, run: RunResult) -> None:
        self.answers, self.killed = parse_answers(run.stdout), run.killed

    def result(self) -> Grade:
        verdict = judge(self.recording, self.answers, seed=self.task.id)
        out = score(self.task, verdict)
        out.answered = len({a["i"] for a in self.answers})
        out.calls = len(self.recording.calls)
        out.killed = self.killed
        out.files = self.files
        out.duration_s = round(time.monotonic() - self.started, 4)
        return out
