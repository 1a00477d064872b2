"""mcpgym environments on the ORS wire (`mcpgym serve --ors-wire`), played by ORS's own client.

The real `ors.client.ORS` (ors-sdk 0.1.0) lists Calendar Gym's splits and v2 tasks and plays
every v2 task's gold plan (the oracle) through ORS tool calls; mcpgym's own client plays the
same tasks, and the rewards, finished flags, results and errors agree step for step.
Needs `ors-sdk` (`just test-ors`); hostile inputs are in test_ors_wire_hostile.py.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from typing import Any

import httpx
import pytest

from helpers.compat import ORS_CLIENT, compat
from helpers.mcp import MCPGYM
from helpers.server import run_server
from helpers.wait import wait_until
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.servers import create_app
from mcpgym.types import CallToolObservation, StepResult, ToolErrorInfo

ors = pytest.importorskip("ors", reason="just test-ors installs ors-sdk")
pytestmark = [pytest.mark.ors, pytest.mark.server]

from ors.client import ORS  # noqa: E402
from ors.client._types import Task, ToolCallError  # noqa: E402

from calendar_gym import CalendarEnv  # noqa: E402
from calendar_gym.agents.oracle import oracle_play  # noqa: E402
from calendar_gym.tasks.loader import load_suite  # noqa: E402

Step = tuple[str, float | None, bool, str | None, Any, dict[str, Any]]
"""(tool, reward, finished, error type or "refused", result, observation metadata) of a step."""


def _play(task_id: str, call: Any) -> list[Step]:
    """The gold plan of `task_id`, each action sent through `call(name, args) -> (Step, result)`."""
    play = oracle_play(load_suite("2").get(task_id))
    steps: list[Step] = []
    try:
        action = next(play)
        while True:
            step, result = call(action["tool_name"], action["arguments"])
            steps.append(step)
            action = play.send(result)
    except StopIteration:
        return steps


def _mcpgym_steps(client: SyncEnvClient, index: int, task_id: str) -> list[Step]:
    client.reset(split="v2", index=index)

    def call(name: str, args: dict[str, Any]) -> tuple[Step, StepResult[Any]]:
        res = client.step(CallToolAction(tool_name=name, arguments=args))
        obs: Any = res.observation
        kind = obs.error.error_type if obs.error is not None else None
        if kind in ("tool_not_found", "invalid_args") and res.reward is None and not res.done:
            kind = "refused"  # what the ORS wire answers with `ok: false`
        return (name, res.reward, res.done, kind, obs.result, obs.metadata), res

    return _play(task_id, call)


def _ors_steps(session: Any, task_id: str) -> list[Step]:
    def call(name: str, args: dict[str, Any]) -> tuple[Step, StepResult[Any]]:
        try:
            out = session.call_tool(name, args)
        except ToolCallError as exc:
            error = ToolErrorInfo(error_type="invalid_args", message=str(exc))
            refused = CallToolObservation(tool_name=name, error=error)
            return (name, None, False, "refused", None, {}), StepResult(observation=refused)
        meta = dict(out.metadata or {})
        error = meta.get("error")
        obs = CallToolObservation(
            tool_name=name,
            result=meta.get("result"),
            error=ToolErrorInfo(**error) if error else None,
        )
        kind = error["error_type"] if error else None
        step = (
            name,
            out.reward,
            out.finished,
            kind,
            meta.get("result"),
            meta.get("observation", {}),
        )
        return step, StepResult(observation=obs, reward=out.reward, done=out.finished)

    return _play(task_id, call)


@compat(
    ORS_CLIENT,
    "ors.client.ORS",
    "works",
    "plays every Calendar Gym v2 gold plan over --ors-wire: rewards, finished, results, "
    "errors and grades equal to mcpgym's own client; tasks are mcpgym's task objects",
)
def test_ors_client_plays_calendar_v2_like_mcpgym_client() -> None:
    app = create_app(CalendarEnv, ors_wire=True)
    with (
        run_server(app) as running,
        ORS(base_url=running.url) as client,
        SyncEnvClient(running.url) as own,
    ):
        env = client.environment("CalendarEnv")
        assert (
            env.list_splits() == [s.name for s in own.list_splits()] and "v2" in env.list_splits()
        )
        tasks = env.list_tasks("v2")
        assert len(tasks) == env.num_tasks("v2") == own.num_tasks("v2") > 50
        assert [t.task_spec for t in tasks] == own.list_tasks("v2")
        assert env.get_task("v2", 7).task_spec == tasks[7].task_spec
        assert [t.task_spec for t in env.get_task_range("v2", 3, 6)] == [
            t.task_spec for t in tasks[3:6]
        ]
        class_tools = sorted(t.name for t in env.list_tools())
        for index, task in enumerate(tasks):
            spec = dict(task.task_spec)
            with env.session(task=task) as session:
                prompt = session.get_prompt()
                assert [(b.type, b.text) for b in prompt] == [("text", spec["prompt"])]  # type: ignore[union-attr]
                assert sorted(t.name for t in session.list_tools()) == class_tools
                got = _ors_steps(session, spec["task"])
            want = _mcpgym_steps(own, index, spec["task"])
            assert got == want, spec["id"]
            assert got[-1][2] is True, f"{spec['id']}: the plan does not finish the episode"
            assert got[-1][1] == 1.0, f"{spec['id']}: the gold plan's final reward"
            assert got[-1][5]["grade"]["success"] is True, spec["id"]
            assert any(step[4] is not None for step in got), spec["id"]


@compat(
    ORS_CLIENT,
    "ors.client.ORS",
    "works",
    "sessions by split and index or by task play the same episode; the final grade rides "
    "in the output's metadata",
)
def test_split_and_index_session_and_final_grade() -> None:
    """`session(split=, index=)` plays the same episode as `session(task=)`; the final step's
    observation metadata (Calendar's grade) rides in the ORS output's metadata."""
    with (
        run_server(create_app(CalendarEnv, ors_wire=True)) as running,
        ORS(base_url=running.url) as client,
    ):
        env = client.environment("calendarenv")  # ORS names match without regard to case
        task = env.get_task("v2", 0)
        with env.session(split="v2", index=0) as by_index:
            first = _ors_steps(by_index, task.task_spec["task"])
            assert by_index.get_prompt()[0].text == task.task_spec["prompt"]  # type: ignore[union-attr]
        with env.session(task=task) as by_task:
            again = _ors_steps(by_task, task.task_spec["task"])
            final = by_task.call_tool("finish", {"status": "done", "summary": "again"})
        assert first == again
        assert first[-1][5]["grade"]["task"] == task.task_spec["task"]
        # A call after the end is a step too (Calendar refuses it): finished stays set.
        assert final.finished and final.metadata["error"]["error_type"] == "execution_error"  # type: ignore[index]


def test_mcpgym_serve_ors_wire_flag() -> None:
    """`mcpgym serve --ors-wire` serves the wire; the start-up line says so."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [*MCPGYM, "serve", "mcpgym.examples.guess:GuessEnv", "--ors-wire", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                return httpx.get(f"{url}/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=60, what="mcpgym serve --ors-wire")
        with ORS(base_url=url) as client:
            env = client.environment("GuessEnv")
            task = Task("GuessEnv", {"reset": {"secret": 9}})
            with env.session(task=task) as session:
                assert session.get_prompt()[0].text == "Guess the integer between 1 and 100."  # type: ignore[union-attr]
                assert session.call_tool("guess", {"n": 9}).finished is True
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "ORS wire" in err, err
