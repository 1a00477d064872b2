"""What run_python and run_tests tell the agent, in both error modes; path checks."""

from __future__ import annotations

import json

import pytest

from code_gym.errors import CodeError, render
from code_gym.outcomes import TRUNCATED, python_result, suite_result
from code_gym.sandbox import RunResult
from code_gym.workspace import check_path


def run(stdout: str = "", stderr: str = "", code: int | None = 1, **kw: object) -> RunResult:
    fields = {"stdout_truncated": False, "stderr_truncated": False, "killed": None, **kw}
    return RunResult(stdout=stdout, stderr=stderr, exit_code=code, duration_s=0.5, **fields)


SYNTAX = (
    '  File "/workspace/solution.py", line 3\n    def f(:\n          ^\n'
    "SyntaxError: invalid syntax\n"
    + "\x1e"
    + json.dumps(
        {
            "type": "SyntaxError",
            "message": "invalid syntax",
            "file": "solution.py",
            "line": 3,
            "column": 11,
            "text": "def f(:",
        }
    )
    + "\n"
)


def test_structured_errors_carry_file_line_column_and_hide_the_report_line() -> None:
    out = python_result(run(stderr=SYNTAX), "structured")
    assert out["ok"] is False
    assert out["error"]["type"] == "SyntaxError"
    assert (out["error"]["file"], out["error"]["line"], out["error"]["column"]) == (
        "solution.py",
        3,
        11,
    )
    assert "\x1e" not in out["stderr"] and "SyntaxError: invalid syntax" in out["stderr"]


def test_plain_mode_has_the_text_and_no_fields() -> None:
    out = python_result(run(stderr=SYNTAX), "plain")
    assert "error" not in out and "SyntaxError" in out["stderr"] and "\x1e" not in out["stderr"]


def test_a_cut_off_report_falls_back_to_the_traceback_text() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/workspace/a.py", line 9, in <module>\n'
        "    1/0\nZeroDivisionError: division by zero\n"
    )
    out = python_result(run(stderr=text, stderr_truncated=True), "structured")
    assert out["error"]["line"] == 9 and out["error"]["file"] == "a.py"
    assert out["stderr"].endswith(TRUNCATED)


def test_killed_runs_say_why() -> None:
    out = python_result(run(code=None, killed="wall_time"), "structured")
    assert out["killed"] == "wall_time" and "wall-time" in out["error"]["message"]


def test_test_report_structured_and_plain() -> None:
    report = {
        "passed": 1,
        "failed": 1,
        "total": 2,
        "tests": [
            {"name": "t.py::test_a", "outcome": "passed"},
            {
                "name": "t.py::test_b",
                "outcome": "failed",
                "file": "t.py",
                "line": 4,
                "column": 4,
                "type": "AssertionError",
                "message": "",
                "text": "assert f(1) == 2",
            },
        ],
    }
    stdout = "noise\n\x1e" + json.dumps(report) + "\n"
    structured = suite_result(run(stdout=stdout), "structured")
    assert (structured["passed"], structured["total"], structured["ok"]) == (1, 2, False)
    assert structured["tests"][1]["line"] == 4
    plain = suite_result(run(stdout=stdout), "plain")
    assert plain["tests"][1] == {"name": "t.py::test_b", "outcome": "failed"}
    assert suite_result(run(stdout="no report"), "structured")["ok"] is False


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "../x",
        "a/../../x",
        "a\\b",
        "a\x00b",
        ".",
        "x" * 300,
        "a/..",
        "a/b/../c.py",
    ],
)
def test_paths_that_could_escape_are_refused(path: str) -> None:
    with pytest.raises(CodeError) as info:
        check_path(path)
    assert info.value.code == "INVALID_PATH"


def test_paths_are_normalised() -> None:
    assert check_path("./pkg//core.py") == "pkg/core.py"


def test_render_both_modes() -> None:
    err = CodeError("FILE_NOT_FOUND", "No file 'a.py'.", field="path", got="a.py", hint="h")
    info = render(err, "structured", "read_file").to_info()
    assert info["error_type"] == "invalid_args"
    assert info["error"] == {
        "code": "FILE_NOT_FOUND",
        "message": "No file 'a.py'.",
        "tool": "read_file",
        "field": "path",
        "got": "a.py",
        "hint": "h",
    }
    assert "error" not in render(err, "plain", "read_file").to_info()
