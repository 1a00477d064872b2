"""CodeEnv end to end on the real sandbox: tools, structured errors in both modes, episodes."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from code_gym import CodeEnv
from code_gym.env import open_solution
from helpers.code import step
from mcpgym import CallToolAction

pytestmark = pytest.mark.code


def result(env: CodeEnv, tool: str, **args: Any) -> dict[str, Any]:
    obs = step(env, tool, **args)
    assert obs.error is None, obs.error  # type: ignore[attr-defined]
    return obs.result  # type: ignore[attr-defined]


def error(env: CodeEnv, tool: str, **args: Any) -> dict[str, Any]:
    obs = step(env, tool, **args)
    assert obs.error is not None  # type: ignore[attr-defined]
    return obs.error.model_dump()  # type: ignore[attr-defined]


def test_files_round_trip_and_list(env: CodeEnv) -> None:
    env.reset()
    assert result(env, "write_file", path="pkg/a.py", content="X = 1\n") == {
        "path": "pkg/a.py",
        "bytes": 6,
    }
    assert result(env, "read_file", path="pkg/a.py")["content"] == "X = 1\n"
    assert result(env, "list_files") == {"files": ["pkg/a.py"]}


def test_run_python_snippet_file_args_stdin(env: CodeEnv) -> None:
    env.reset()
    out = result(
        env,
        "run_python",
        code="import sys; print(sys.argv[1:], input())",
        args=["a", "b"],
        stdin="hi\n",
    )
    assert out["stdout"] == "['a', 'b'] hi\n" and out["exit_code"] == 0 and out["ok"]
    result(env, "write_file", path="main.py", content="print(__name__)\n")
    assert result(env, "run_python", file="main.py")["stdout"] == "__main__\n"


def test_the_same_runs_give_the_same_observations(env: CodeEnv) -> None:
    """No clock reaches the agent: replay and the cross-process check compare observations."""
    code = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < {d}: pass\n1/0\n"
    test = "def test_t():\n    assert 1 == 2\n"
    seen = []
    for d in (0.0, 0.3):
        env.reset()
        result(env, "write_file", path="tests/test_a.py", content=test)
        seen.append(
            (
                result(env, "run_python", code=code.format(d=d)),
                result(env, "run_tests"),
            )
        )
    assert seen[0] == seen[1]
    assert seen[0][0]["error"]["type"] == "ZeroDivisionError" and seen[0][1]["failed"] == 1


def test_syntax_error_comes_back_with_file_line_column(env: CodeEnv) -> None:
    env.reset()
    result(env, "write_file", path="bad.py", content="x = 1\ndef f(:\n    pass\n")
    out = result(env, "run_python", file="bad.py")
    assert out["ok"] is False and out["exit_code"] == 1
    err = out["error"]
    assert (err["type"], err["file"], err["line"]) == ("SyntaxError", "bad.py", 2)
    assert isinstance(err["column"], int) and err["message"]
    assert "\x1e" not in out["stderr"] and "SyntaxError" in out["stderr"]


def test_traceback_points_at_the_innermost_workspace_frame(env: CodeEnv) -> None:
    env.reset()
    result(env, "write_file", path="lib.py", content="def f(d):\n    return d['missing']\n")
    result(env, "write_file", path="main.py", content="import lib\n\nlib.f({})\n")
    err = result(env, "run_python", file="main.py")["error"]
    assert (err["type"], err["file"], err["line"]) == ("KeyError", "lib.py", 2)
    assert err["text"].strip() == "return d['missing']"


def test_plain_mode_gives_text_only(env: CodeEnv) -> None:
    env.reset(error_mode="plain")
    out = result(env, "run_python", code="1/0")
    assert "error" not in out and "ZeroDivisionError" in out["stderr"]
    bad = error(env, "read_file", path="nope.py")
    assert bad["message"].startswith("read_file failed:") and "error" not in bad


def test_bad_calls_are_structured_and_correctable(env: CodeEnv) -> None:
    env.reset(task="HumanEval/0")
    bad = error(env, "read_file", path="solutoin.py")["error"]
    assert bad["code"] == "FILE_NOT_FOUND" and bad["suggestions"][0] == "solution.py"
    assert error(env, "write_file", path="../x.py", content="")["error"]["code"] == "INVALID_PATH"
    assert error(env, "run_python")["error"]["code"] == "INVALID_ARGUMENTS"
    assert error(env, "run_python", file="a.py", code="1")["error"]["code"] == "INVALID_ARGUMENTS"
    assert error(env, "run_python", file="ghost.py")["error"]["code"] == "FILE_NOT_FOUND"
    big = "x" * (300 * 1024)
    assert error(env, "write_file", path="a.py", content=big)["error"]["code"] == "FILE_TOO_LARGE"


def test_output_truncation_is_marked(env: CodeEnv) -> None:
    env.reset()
    out = result(env, "run_python", code="print('x' * 200000)")
    assert out["stdout_truncated"] is True and out["stdout"].endswith(
        "truncated by the sandbox ...]"
    )


def test_run_tests_reports_each_visible_test(env: CodeEnv) -> None:
    env.reset(task="repo/wordstats-fix-suite")
    out = result(env, "run_tests")
    assert (out["passed"], out["total"]) == (1, 3)
    failed = [t for t in out["tests"] if t["outcome"] != "passed"]
    assert {t["file"] for t in failed} == {"tests/test_core.py"}
    assert all(isinstance(t["line"], int) and t["type"] == "AssertionError" for t in failed)


def test_a_task_episode_ends_at_submit_with_the_grade(env: CodeEnv) -> None:
    obs = env.reset(task_id="HumanEval/53")
    assert obs.metadata["files"] == ["solution.py", "test_solution.py"]
    assert "add" in obs.metadata["prompt"]
    result(env, "write_file", path="solution.py", content=open_solution("HumanEval/53"))
    assert result(env, "run_tests")["ok"] is True
    final = step(env, "submit")
    assert final.done and final.reward == 1.0
    assert final.metadata["success"] is True and final.metadata["grade"]["passed"] == 6
    assert env.state.submitted is True  # type: ignore[attr-defined]
    assert error(env, "list_files")["error"]["code"] == "EPISODE_OVER"


def test_the_step_limit_grades_the_workspace_as_it_stands(env: CodeEnv) -> None:
    env.reset(task="HumanEval/53")
    result(env, "write_file", path="solution.py", content=open_solution("HumanEval/53"))
    obs = None
    for _ in range(env.max_steps - 1):
        obs = step(env, "list_files")
    assert obs is not None and obs.done and obs.reward == 1.0


async def test_the_step_limit_is_graded_off_the_event_loop() -> None:
    """Served (`astep`), the step that reaches the limit is graded by an awaited sandbox run:
    a ticker on the same loop keeps ticking while it grades, and the reward and the grade are
    those of the synchronous path."""
    env = CodeEnv()
    try:
        env.reset(task="HumanEval/53")
        solution = {"path": "solution.py", "content": open_solution("HumanEval/53")}
        await env.astep(CallToolAction(tool_name="write_file", arguments=solution))
        for _ in range(env.max_steps - 2):
            obs = await env.astep(CallToolAction(tool_name="list_files", arguments={}))
            assert not obs.done and not obs.reward
        ticks: list[float] = []

        async def tick() -> None:
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.005)

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.02)
        start = len(ticks)
        t0 = time.monotonic()
        obs = await env.astep(CallToolAction(tool_name="list_files", arguments={}))
        took = time.monotonic() - t0
        ticker.cancel()
        assert obs.done and obs.reward == 1.0, obs
        assert obs.metadata["success"] is True and obs.metadata["grade"]["passed"] == 6
        assert env.state.submitted is True  # type: ignore[attr-defined]
        gaps = [b - a for a, b in zip(ticks[start:], ticks[start + 1 :], strict=False)]
        assert len(ticks) - start >= 3 and max(gaps, default=took) < max(0.5, took / 2), (
            took,
            gaps,
        )
        late = await env.astep(CallToolAction(tool_name="list_files", arguments={}))
        assert late.error is not None and not late.reward  # type: ignore[attr-defined]
    finally:
        env.close()


def test_reset_empties_the_workspace_and_rejects_bad_options(env: CodeEnv) -> None:
    env.reset(task="HumanEval/1")
    result(env, "write_file", path="junk.py", content="")
    obs = env.reset(task="HumanEval/2")
    assert obs.metadata["files"] == ["solution.py", "test_solution.py"]
    from mcpgym.errors import InvalidRequest

    for bad in (
        {"error_mode": "loud"},
        {"reward": "money"},
        {"task": "HumanEval/999"},
        {"colour": 1},
    ):
        with pytest.raises(InvalidRequest):
            env.reset(**bad)


def test_submit_without_a_task_is_an_error_not_the_end(env: CodeEnv) -> None:
    env.reset()
    assert error(env, "submit")["error"]["code"] == "NO_TASK"
    assert result(env, "list_files") == {"files": []}


def test_binary_and_shaped_rewards(env: CodeEnv) -> None:
    env.reset(task="repo/wordstats-fix-suite", reward="shaped")
    first = step(env, "run_tests")
    assert first.reward == pytest.approx(0.1 / 3)  # 1 of 3 visible tests passes at the start
    assert step(env, "run_tests").reward == 0.0  # no new progress, nothing paid
    from code_gym.tasks import get_task

    for path, text in get_task("repo/wordstats-fix-suite").solution.items():
        result(env, "write_file", path=path, content=text)
    assert step(env, "run_tests").reward == pytest.approx(0.1 * 2 / 3)
    assert step(env, "submit").reward == pytest.approx(0.9)
    env.reset(task="HumanEval/53", reward="binary")
    broken = open_solution("HumanEval/53").replace("return x + y", "return x + y if x else 0")
    result(env, "write_file", path="solution.py", content=broken)
    assert step(env, "submit").reward == 0.0


def test_sessions_do_not_see_each_other(env: CodeEnv) -> None:
    other = CodeEnv()
    try:
        env.reset()
        other.reset()
        result(env, "write_file", path="secret.txt", content="mine")
        assert result(other, "list_files") == {"files": []}
        out = result(other, "run_python", code="import os; print(os.listdir('/workspace'))")
        assert out["stdout"] == "[]\n"
    finally:
        other.close()


def test_without_a_sandbox_the_server_starts_and_tools_say_why() -> None:
    """A task-less reset (production's start-up) needs no sandbox; the first tool call that does
    gets a structured SANDBOX_UNAVAILABLE (here: a factory that cannot start one)."""
    from code_gym.sandbox import SandboxUnavailable

    def no_bwrap(**_: Any) -> Any:
        raise SandboxUnavailable("bubblewrap is not installed")

    env = CodeEnv(sandbox_factory=no_bwrap)
    assert env.reset().metadata["files"] == []
    err = error(env, "list_files")["error"]
    assert err["code"] == "SANDBOX_UNAVAILABLE" and "bubblewrap" in err["message"]
    env.close()


def test_a_task_reset_without_a_sandbox_starts_and_every_tool_says_why() -> None:
    """A task reset where no sandbox can start (a hardened container: its seccomp profile
    forbids namespaces) still starts the episode; every tool, `submit` too, answers
    SANDBOX_UNAVAILABLE, and nothing is retried or run unsandboxed."""
    from code_gym.sandbox import SandboxUnavailable

    tries: list[int] = []

    def no_namespaces(**_: Any) -> Any:
        tries.append(1)
        raise SandboxUnavailable("bubblewrap cannot create a sandbox here")

    env = CodeEnv(sandbox_factory=no_namespaces)
    meta = env.reset(task_id="HumanEval/53").metadata
    assert meta["task"] == "HumanEval/53" and "def add" in meta["prompt"]
    assert meta["files"] == [] and "cannot create" in meta["sandbox_unavailable"]
    calls = [
        ("write_file", {"path": "solution.py", "content": "def add(x, y): return x + y"}),
        ("run_python", {"code": "print(1)"}),
        ("run_tests", {}),
        ("submit", {}),
    ]
    for name, args in calls:
        err = error(env, name, **args)["error"]
        assert (err["code"], err["tool"]) == ("SANDBOX_UNAVAILABLE", name)
        assert "cannot create a sandbox" in err["message"]
    assert len(tries) == 1 and env.state.submitted is False
    env.close()
