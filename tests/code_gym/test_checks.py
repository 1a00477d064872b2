"""Hidden tests split into steps, recorded with the reference, judged from answers."""

from __future__ import annotations

from typing import Any

from code_gym.checks import judge, record
from code_gym.runner.wire import encode

SOURCE = """
import math

def check(candidate):
    assert True, "never counted"
    x = candidate(1)
    assert x == 2
    assert candidate(3) == 6
    for i in range(3):
        assert candidate(i) == 2 * i
    import random
    n = random.randint(0, 10**9)
    assert candidate(n) == 2 * n
    y = 5
    assert y == 5
"""


def answers(rec: Any, fn: Any) -> list[dict[str, Any]]:
    from code_gym.runner.wire import decode

    out = []
    for i, (_, args, kwargs) in enumerate(rec.calls):
        try:
            out.append({"i": i, "ok": encode(fn(*decode(args), **decode(kwargs)))})
        except Exception as exc:
            out.append({"i": i, "raised": type(exc).__name__, "message": str(exc)})
    return out


def rec() -> Any:
    return record(SOURCE, "solution:double", {"solution:double": lambda x: 2 * x}, seed="t")


def test_only_asserts_that_touch_the_candidate_count() -> None:
    r = rec()
    counted = [s.line for s in r.steps if s.counts]
    # `assert True` and `assert y == 5` (y never touched the candidate) are not tests;
    # `assert x == 2` is, through the tainted name x
    assert r.tests == 4
    assert counted == [7, 8, 9, 13]


def test_the_reference_passes_and_wrong_answers_fail_per_test() -> None:
    r = rec()
    assert judge(r, answers(r, lambda x: 2 * x), seed="t").fraction == 1.0
    half = judge(r, answers(r, lambda x: 2 * x if x < 3 else 0), seed="t")
    assert (half.passed, half.total) == (2, 4)
    assert {f["kind"] for f in half.failures} == {"wrong_answer"}


def test_the_seeded_random_module_repeats_the_calls() -> None:
    assert rec().calls == rec().calls
    other = record(SOURCE, "solution:double", {"solution:double": lambda x: 2 * x}, seed="u")
    assert other.calls != rec().calls


def test_missing_answers_raised_errors_and_forged_lines_fail() -> None:
    r = rec()
    good = answers(r, lambda x: 2 * x)
    assert judge(r, [], seed="t").passed == 0
    assert judge(r, good[:2], seed="t").passed == 2
    raised = [{"i": a["i"], "raised": "SystemExit", "message": "0"} for a in good]
    assert judge(r, raised, seed="t").passed == 0
    forged = [{"i": a["i"], "ok": ["v", "PASSED"]} for a in good]
    assert judge(r, forged, seed="t").passed == 0
    # the first answer for an index counts, later duplicates do not
    dup = [{"i": 0, "ok": ["i", "0"]}, *good]
    assert judge(r, dup, seed="t").passed == 3


def test_constant_answers_score_zero_even_where_the_constant_is_right() -> None:
    source = (
        "def check(candidate):\n    assert candidate([]) is None\n    assert candidate([1]) == 1\n"
    )
    r = record(source, "solution:f", {"solution:f": lambda xs: xs[0] if xs else None})
    verdict = judge(r, answers(r, lambda xs: None))
    assert verdict.passed == 1 and verdict.constant and verdict.fraction == 0.0


def test_failures_say_nothing_of_the_hidden_code_or_values() -> None:
    r = rec()
    verdict = judge(r, answers(r, lambda x: -12345), seed="t")
    text = repr(verdict.failures)
    assert "-12345" not in text and "candidate" not in text and "2 * i" not in text
    assert all(set(f) == {"test", "line", "kind"} for f in verdict.failures)


def test_package_candidates_call_module_functions() -> None:
    source = (
        "def check(candidate):\n    assert candidate.core.f(2) == 3\n"
        "    assert candidate.g() == 1\n"
    )
    r = record(source, "pkg", {"pkg.core:f": lambda x: x + 1, "pkg:g": lambda: 1})
    assert [c[0] for c in r.calls] == ["pkg.core:f", "pkg:g"]


def test_a_builtin_exception_answer_is_raised_as_itself() -> None:
    source = (
        "def check(candidate):\n    ok = False\n    try:\n        candidate(-1)\n"
        "    except ValueError:\n        ok = True\n    assert ok\n"
    )

    def ref(x: int) -> int:
        if x < 0:
            raise ValueError("negative")
        return x

    r = record(source, "solution:f", {"solution:f": ref})
    assert r.tests == 1
    assert judge(r, answers(r, ref)).passed == 1
    assert judge(r, [{"i": 0, "raised": "TypeError", "message": ""}]).passed == 0
    assert judge(r, [{"i": 0, "ok": ["v", None]}]).passed == 0


def test_one_right_answer_then_silence_is_a_constant_too() -> None:
    """A submission that forges one answer line (True for the first call) and dies: one
    distinct value over all calls while the reference's vary -> 0."""
    source = "def check(candidate):\n" + "".join(
        f"    assert candidate({i}) == {i % 2 == 0}\n" for i in range(4)
    )
    r = record(source, "solution:even", {"solution:even": lambda n: n % 2 == 0})
    verdict = judge(r, [{"i": 0, "ok": ["v", True]}])
    assert verdict.passed == 1 and verdict.constant and verdict.fraction == 0.0
