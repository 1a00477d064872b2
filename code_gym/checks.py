"""Hidden tests as a program the host runs twice: once to record the calls, once to judge.

A hidden test source defines `check(candidate)` (HumanEval's shape; an in-house task's
`candidate` is a package proxy: `candidate.core.parse("x")` calls `pkg.core:parse`). The body
of `check` is split at its top-level statements (`ast`); each statement is one *step*, and a step
that contains an `assert` and touches the candidate (directly or through a name a tainted step
assigned) is one *test*. `assert True` lines and setup statements count for nothing.

1. `record(reference)` runs every step with the trusted reference solution standing in for the
   candidate and records each call's arguments (`Recording`).
2. The recorded calls are answered by the submission in a fresh sandbox (`code_gym.grading`).
3. `judge(recording, answers)` runs every step again, the candidate's calls now returning the
   submission's answers (plain values only, `code_gym.runner.wire`), and reports which tests
   passed. The verdict is computed here, on the host, from code the submission never saw.

Each step draws from its own seeded `random` module, so both runs make the same calls.

Example:
    >>> src = "def check(candidate):\\n    assert candidate(2) == 4\\n    assert True\\n"
    >>> rec = record(src, "solution:double", {"solution:double": lambda x: 2 * x})
    >>> [s.counts for s in rec.steps], rec.calls
    ([True, False], [('solution:double', ['l', [['i', '2']]], ['d', []])])
    >>> judge(rec, [{"i": 0, "ok": ["i", "4"]}]).passed
    1
"""

from __future__ import annotations

import ast
import builtins
import copy
import json
import random
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from code_gym.runner.wire import WireError, decode, encode

__all__ = ["CandidateError", "Recording", "Step", "Verdict", "judge", "record"]


class CandidateError(Exception):
    """The submission did not answer a call (it raised, timed out, or its run ended early)."""


class _Mismatch(Exception):
    """The judging run made a call the recording does not have (a non-deterministic check)."""


@dataclass(frozen=True)
class Step:
    """One top-level statement of `check`: its line, whether it is a test, and its code."""

    index: int
    line: int
    counts: bool
    number: int
    code: types.CodeType = field(repr=False)
    text: str = ""


@dataclass
class Recording:
    """The steps of a check and the calls each made with the reference solution."""

    source: str
    prelude: str
    steps: list[Step]
    calls: list[tuple[str, Any, Any]]
    step_calls: list[list[int]]
    reference_answers: list[str]
    roots: dict[str, str]

    @property
    def tests(self) -> int:
        """How many tests the check holds."""
        return sum(s.counts for s in self.steps)


@dataclass
class Verdict:
    """Which tests passed, and why the others failed."""

    passed: int
    total: int
    failures: list[dict[str, Any]]
    constant: bool = False
    passed_steps: frozenset[int] = frozenset()

    @property
    def fraction(self) -> float:
        """Passed tests over all tests (0.0 when the answers did not depend on the input)."""
        if self.total == 0 or self.constant:
            return 0.0
        return self.passed / self.total


def _names(node: ast.AST, ctx: type) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _steps(source: str, roots: Sequence[str]) -> list[Step]:
    tree = ast.parse(source)
    check = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None
    )
    if check is None:
        raise ValueError("the hidden test source defines no check(candidate)")
    tainted = set(roots) | {a.arg for a in check.args.args}
    out: list[Step] = []
    number = 0
    for i, stmt in enumerate(check.body):
        touches = bool(_names(stmt, ast.Load) & tainted)
        if touches:
            tainted |= _names(stmt, ast.Store)
        has_assert = any(isinstance(n, ast.Assert) for n in ast.walk(stmt))
        module = ast.Module(body=[stmt], type_ignores=[])
        code = compile(module, "<hidden tests>", "exec")
        text = ast.get_source_segment(source, stmt) or ""
        counts = touches and has_assert
        number += counts
        out.append(Step(i, stmt.lineno, counts, number if counts else 0, code, text[:120]))
    return out


class _Calls:
    """What a candidate proxy calls into: the recorder or the judge."""

    def __init__(self, handler: Callable[[str, tuple[Any, ...], dict[str, Any]], Any]) -> None:
        self.handler = handler


class _Proxy:
    """`candidate`: a callable for a function target, attribute access for a package."""

    def __init__(self, calls: _Calls, module: str, name: str | None) -> None:
        self._calls, self._module, self._name = calls, module, name

    def __getattr__(self, attr: str) -> _Proxy:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self._name is None:
            return _Proxy(self._calls, self._module, attr)
        return _Proxy(self._calls, f"{self._module}.{self._name}", attr)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._name is None:
            raise TypeError(f"{self._module} is a package, not a function")
        return self._calls.handler(f"{self._module}:{self._name}", args, kwargs)


def _proxy(calls: _Calls, target: str) -> _Proxy:
    module, _, name = target.partition(":")
    return _Proxy(calls, module, name or None)


def _namespace(prelude: str, source: str, step_rng: random.Random) -> dict[str, Any]:
    """Globals with the prelude and the test source executed, `random` private and seeded."""
    private = types.ModuleType("random")
    for name in dir(random):
        if not name.startswith("_"):
            setattr(private, name, getattr(random, name))
    for name in (
        "random",
        "randint",
        "choice",
        "choices",
        "shuffle",
        "sample",
        "uniform",
        "randrange",
        "seed",
        "gauss",
        "getrandbits",
    ):
        setattr(private, name, getattr(step_rng, name))
    real_import = builtins.__import__

    def guarded_import(name: str, *args: Any, **kwargs: Any) -> Any:
        return private if name == "random" else real_import(name, *args, **kwargs)

    own = dict(vars(builtins))
    own["__import__"] = guarded_import
    ns: dict[str, Any] = {"__builtins__": own, "__name__": "hidden_tests", "__step_rng__": step_rng}
    exec(compile(prelude, "<task prelude>", "exec"), ns)
    exec(compile(source, "<hidden tests>", "exec"), ns)
    return ns


def _canon(value: Any) -> str:
    try:
        return json.dumps(encode(value), sort_keys=True)
    except (WireError, TypeError, ValueError):
        return repr(type(value))


def record(
    source: str,
    candidate: str,
    reference: Mapping[str, Callable[..., Any]],
    *,
    prelude: str = "",
    seed: str = "",
    aliases: Sequence[str] = (),
) -> Recording:
    """Run the check with `reference` (functions by target) and record every call made.

    `candidate` is the target `candidate` stands for (`solution:f`, or a package name `pkg`);
    `aliases` are further names bound to it (HumanEval's entry point).
    """
    steps = _steps(source, ["candidate", *aliases])
    calls: list[tuple[str, Any, Any]] = []
    step_calls: list[list[int]] = []
    answers: list[str] = []

    def on_call(target: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        calls.append((target, encode(list(args)), encode(dict(kwargs))))
        step_calls[-1].append(len(calls) - 1)
        fn = reference.get(target)
        if fn is None:
            raise KeyError(f"the reference has no {target}")
        try:
            value = fn(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except Exception as exc:
            answers.append(f"raised {type(exc).__name__}")
            raise
        answers.append(_canon(value))
        return value

    ns = _namespace(prelude, source, random.Random(seed))
    for step in steps:
        step_calls.append([])
        _run_step(step, seed, candidate, aliases, on_call, ns)
    roots = {"candidate": candidate, **{a: candidate for a in aliases}}
    return Recording(source, prelude, steps, calls, step_calls, answers, roots)


def _run_step(
    step: Step,
    seed: str,
    candidate: str,
    aliases: Sequence[str],
    on_call: Callable[[str, tuple[Any, ...], dict[str, Any]], Any],
    ns: dict[str, Any],
) -> None:
    ns["__step_rng__"].seed(f"{seed}:{step.index}")
    proxy = _proxy(_Calls(on_call), candidate)
    ns["candidate"] = proxy
    for alias in aliases:
        ns[alias] = proxy
    exec(step.code, ns)


_BUILTIN_ERRORS = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, Exception)
}


def judge(recording: Recording, answers: Sequence[Mapping[str, Any]], *, seed: str = "") -> Verdict:
    """Run the check again, the candidate answering from `answers` (the driver's lines)."""
    by_index: dict[int, Mapping[str, Any]] = {}
    for line in answers:
        i = line.get("i")
        if isinstance(i, int) and i not in by_index:
            by_index[i] = line
    candidate = recording.roots["candidate"]
    aliases = [a for a in recording.roots if a != "candidate"]
    passed, failures, passed_steps = 0, [], set()
    ns = _namespace(recording.prelude, recording.source, random.Random(seed))
    for step in recording.steps:
        on_call = _Replay(recording, recording.step_calls[step.index], by_index)
        try:
            _run_step(step, seed, candidate, aliases, on_call, ns)
        except Exception as exc:
            if step.counts:
                failures.append(_failure(step, exc))
            continue
        if step.counts:
            passed += 1
            passed_steps.add(step.index)
    # answers that ignore the input (a constant, None) earn nothing, even where the expected
    # value happens to be that constant: over every recorded call (answered or not, reached or
    # not) the submission gave at most one distinct value while the reference's varied; and
    # handing an argument back is no answer either
    values = set()
    for i in range(len(recording.calls)):
        line = by_index.get(i)
        if line is not None and "ok" in line:
            values.add(json.dumps(line["ok"], sort_keys=True, default=str)[:10_000])
    constant = len(values) <= 1 and len(set(recording.reference_answers)) > 1
    constant = constant or _echoes(recording, by_index)
    return Verdict(passed, recording.tests, failures, constant, frozenset(passed_steps))


def _echoes(recording: Recording, answers: Mapping[int, Mapping[str, Any]]) -> bool:
    """Every answer is one of the call's own arguments (the same position each time), while
    the reference's answers are not all that argument: the input handed back is no answer."""
    answered = [
        (i, a["ok"]) for i, a in answers.items() if "ok" in a and 0 <= i < len(recording.calls)
    ]
    if len(answered) < 2:
        return False
    width = min(len(recording.calls[i][1][1]) for i, _ in answered)

    def arg(i: int, p: int) -> str:
        return json.dumps(recording.calls[i][1][1][p], sort_keys=True)

    ref = recording.reference_answers
    for p in range(width):
        echoed = all(json.dumps(ok, sort_keys=True) == arg(i, p) for i, ok in answered)
        if echoed and not all(ref[i] == arg(i, p) for i in range(len(recording.calls))):
            return True
    return False


class _Replay:
    """The candidate during judging: the i-th call of a step gets the answer to the i-th call
    the step made while recording, if it is the same call."""

    def __init__(
        self, recording: Recording, expected: list[int], answers: Mapping[int, Mapping[str, Any]]
    ) -> None:
        self.recording, self.expected, self.answers = recording, expected, answers
        self.position = 0

    def __call__(self, target: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        k = self.position
        self.position += 1
        if k >= len(self.expected):
            raise _Mismatch("the check made more calls than it recorded")
        index = self.expected[k]
        if self.recording.calls[index] != (target, encode(list(args)), encode(dict(kwargs))):
            raise _Mismatch("the check made a call it did not record")
        return _answer(self.answers.get(index))


def _answer(line: Mapping[str, Any] | None) -> Any:
    if line is None:
        raise CandidateError("no answer: the run ended before this call (time or resources)")
    if "ok" in line:
        try:
            value = decode(line["ok"])
        except WireError as exc:
            raise CandidateError(f"the answer is not a plain value: {exc}") from None
        return value
    name = str(line.get("raised", "Exception"))
    message = str(line.get("message", ""))[:300]
    cls = _BUILTIN_ERRORS.get(name, CandidateError)
    raise cls(message) if cls is not CandidateError else CandidateError(f"{name}: {message}")


def _failure(step: Step, exc: Exception) -> dict[str, Any]:
    """What a failed test says: its number and the kind of failure, never its code or values
    (the hidden tests stay hidden, even after the episode: a trainer sees observations)."""
    if isinstance(exc, AssertionError):
        kind = "wrong_answer"
    elif isinstance(exc, CandidateError) and "no answer" in str(exc):
        kind = "no_answer"
    elif isinstance(exc, _Mismatch):
        kind = "grader_mismatch"
    else:
        kind = "raised"
    return {"test": step.number, "line": step.line, "kind": kind}
