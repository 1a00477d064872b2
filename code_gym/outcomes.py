"""What a run tells the agent: `run_python` and `run_tests` results in both error modes.

The sandbox-side programs (`code_gym/runner/`) end their output with one line that starts with
the record separator (\\x1e) and holds JSON: `bootstrap.py` an uncaught exception's `type`,
`message`, `file`, `line`, `column`; `visible.py` the test report. The host strips that line
from what the agent sees and, in `structured` mode, returns it as fields; in `plain` mode the
agent gets the text only. The line is the program's own claim (the agent's code could print
one): it only ever describes the agent's own run, never a grade. No wall-clock figure reaches
the agent (the run's duration stays on `RunResult`): the same actions give the same
observations on any machine and in any process, as replay and `check_determinism` require.

Example:
    >>> from code_gym.sandbox import RunResult
    >>> run = RunResult(stdout="", stderr='Traceback ...\\nZeroDivisionError: division by zero\\n'
    ...     '\\x1e{"type": "ZeroDivisionError", "message": "division by zero", "file": "<snippet>",'
    ...     ' "line": 1, "column": 0}\\n', exit_code=1, duration_s=0.01, stdout_truncated=False,
    ...     stderr_truncated=False, killed=None)
    >>> python_result(run, "structured")["error"]["line"]
    1
    >>> "error" in python_result(run, "plain")
    False
"""

from __future__ import annotations

import json
import re
from typing import Any

from code_gym.errors import ErrorMode
from code_gym.sandbox import RunResult

__all__ = ["python_result", "suite_result"]

SEP = "\x1e"
TRUNCATED = "\n[... output truncated by the sandbox ...]"
_FIELDS = ("type", "message", "file", "line", "column", "end_column", "text")
_LAST_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_LAST_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)):? ?(?P<msg>.*)$"
)


def _split(text: str) -> tuple[str, dict[str, Any] | None]:
    """The text without its report line, and the report (the last well-formed one)."""
    kept: list[str] = []
    report: dict[str, Any] | None = None
    for line in text.split("\n"):  # not splitlines(): it splits at \x1e as well
        if line.startswith(SEP):
            try:
                found = json.loads(line[1:])
            except (ValueError, RecursionError):  # RecursionError: a line nested too deep
                continue
            if isinstance(found, dict):
                report = found
            continue
        kept.append(line)
    return "\n".join(kept), report


def _from_text(stderr: str) -> dict[str, Any] | None:
    """A traceback's last frame and exception line, when the report line was cut off."""
    frames = list(_LAST_FRAME.finditer(stderr))
    lines = [ln for ln in stderr.strip().splitlines() if ln and not ln.startswith(" ")]
    last = _LAST_LINE.match(lines[-1]) if lines else None
    if not frames or last is None:
        return None
    file = frames[-1]["file"].removeprefix("/workspace/")
    return {
        "type": last["type"],
        "message": last["msg"],
        "file": file,
        "line": int(frames[-1]["line"]),
        "column": None,
    }


def _common(run: RunResult, stdout: str, stderr: str) -> dict[str, Any]:
    if run.stdout_truncated:
        stdout += TRUNCATED
    if run.stderr_truncated:
        stderr += TRUNCATED
    out: dict[str, Any] = {
        "exit_code": run.exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "stdout_truncated": run.stdout_truncated,
        "stderr_truncated": run.stderr_truncated,
    }
    if run.killed is not None:
        out["killed"] = run.killed
    return out


def python_result(run: RunResult, mode: ErrorMode) -> dict[str, Any]:
    """`run_python`'s result: output, exit code, and in `structured` mode the error."""
    stderr, report = _split(run.stderr)
    out = _common(run, run.stdout, stderr)
    out["ok"] = run.exit_code == 0 and run.killed is None
    if mode == "structured" and not out["ok"]:
        if report is None and run.killed is None:
            report = _from_text(stderr)
        if run.killed is not None:
            report = {
                "type": "Killed",
                "message": _killed(run.killed),
                "file": None,
                "line": None,
                "column": None,
            }
        if report is not None:
            out["error"] = {
                k: report.get(k) for k in _FIELDS if k in report or k in ("file", "line", "column")
            }
    return out


def _killed(reason: str) -> str:
    return {
        "wall_time": "the program ran past the wall-time limit and was killed",
        "cpu_time": "the program used up its CPU-time limit and was killed",
        "memory": "the program ran out of its memory limit and was killed",
        "output": "the program printed more than the output limit and was killed",
        "processes": "the program started more processes than allowed and was killed",
    }.get(reason, f"the program was killed ({reason})")


def suite_result(run: RunResult, mode: ErrorMode) -> dict[str, Any]:
    """`run_tests`' result: counts, and per test its outcome (structured: file, line, ...)."""
    stdout, report = _split(run.stdout)
    out = _common(run, stdout, run.stderr)
    if report is None:
        out.update(passed=0, failed=0, total=0, ok=False)
        if mode == "structured":
            why = _killed(run.killed) if run.killed else "the test runner did not report"
            out["error"] = {"type": "RunnerFailed", "message": why}
        return out
    tests = [t for t in report.get("tests", []) if isinstance(t, dict)]
    passed = sum(t.get("outcome") == "passed" for t in tests)
    out.update(
        passed=passed,
        failed=len(tests) - passed,
        total=len(tests),
        ok=passed == len(tests) and run.killed is None,
    )
    if mode == "structured":
        out["tests"] = tests
    else:
        out["tests"] = [{"name": t.get("name"), "outcome": t.get("outcome")} for t in tests]
    return out
