"""Bridge failures are structured errors with deadlines, never hangs, and no worker outlives
its environment: a crash mid-episode, a hang (the bridge's call timeout and the server's step
timeout), bad tool arguments, a worker that never starts or cannot load, a failed reset, close,
and the host dying. All on the openenv backend (CounterEnv), whose worker starts fastest.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bridge_helpers import FIXTURES

from helpers.server import run_server
from helpers.wait import wait_until
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.errors import ExecutionError, StepTimeout
from mcpgym.integrations.bridge import bridge_environment
from mcpgym.servers import create_app

pytestmark = [pytest.mark.bridge, pytest.mark.timeout(300)]

TARGET = "openenv_counter:CounterEnv"


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for a reaper has stopped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def _env(python: Path, **kwargs: Any) -> Any:
    return bridge_environment("openenv", TARGET, python=python, paths=[FIXTURES], **kwargs)()


async def _call(env: Any, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> Any:
    return await env.astep(CallToolAction(tool_name=name, arguments=arguments or {}), **kw)


async def test_crash_mid_episode_is_a_structured_error(worker_venvs: dict[str, Path]) -> None:
    env = _env(worker_venvs["openenv"])
    await env.areset()
    pid = env.worker.pid
    assert (await _call(env, "add", {"n": 2})).reward == pytest.approx(0.1)
    started = time.monotonic()
    obs = await _call(env, "crash")
    assert time.monotonic() - started < 20
    assert obs.error.error_type == "execution_error" and obs.done and obs.reward is None
    assert obs.error.reason == "exited" and obs.error.exit_code == 17, obs.error
    assert "exited (code 17)" in obs.error.message
    assert "stderr" not in obs.error.model_dump()  # its traceback is for the log, not clients
    assert not _alive(pid) and env.worker is None
    again = await _call(env, "add", {"n": 1})
    assert again.error.error_type == "execution_error" and "reset" in again.error.message
    await env.areset(start=1)  # a new worker, a new episode
    assert env.worker.pid != pid
    assert (await _call(env, "peek")).result["data"] == {"total": 1}
    await env.aclose()


def test_crash_through_the_server(worker_venvs: dict[str, Path]) -> None:
    cls = bridge_environment("openenv", TARGET, python=worker_venvs["openenv"], paths=[FIXTURES])
    with run_server(create_app(cls)) as server, SyncEnvClient(server.url, timeout=150) as client:
        client.reset()
        res = client.step(CallToolAction(tool_name="crash"))
        error = res.observation.error  # type: ignore[attr-defined]
        assert error is not None and error.error_type == "execution_error" and res.done
        client.reset()
        res = client.step(CallToolAction(tool_name="add", arguments={"n": 4}))
        assert res.observation.result["data"] == 4 and res.reward == 0.1  # type: ignore[attr-defined]


async def test_hang_honours_the_call_timeout(worker_venvs: dict[str, Path]) -> None:
    env = _env(worker_venvs["openenv"], call_timeout_s=3)
    await env.areset()
    pid = env.worker.pid
    started = time.monotonic()
    obs = await _call(env, "hang")
    took = time.monotonic() - started
    assert 3 <= took < 15, took
    assert obs.error.error_type == "timeout" and obs.error.reason == "timeout" and obs.done
    assert "within 3.0 s" in obs.error.message
    assert not _alive(pid)
    await env.aclose()


async def test_hang_honours_the_servers_step_timeout(worker_venvs: dict[str, Path]) -> None:
    env = _env(worker_venvs["openenv"], call_timeout_s=600)
    await env.areset()
    pid = env.worker.pid
    started = time.monotonic()
    try:
        obs = await _call(env, "hang", timeout_s=2)
    except StepTimeout:
        obs = None
    assert time.monotonic() - started < 15
    if obs is not None:  # the step's own timeout: the episode died with the worker
        assert obs.error.error_type == "timeout" and obs.done, obs
    # The cancelled call kills its worker once the loop runs it: wait without blocking the loop.
    deadline = time.monotonic() + 10
    while _alive(pid):
        assert time.monotonic() < deadline, "the hung worker was not killed"
        await asyncio.sleep(0.05)
    assert env.worker is None
    after = await _call(env, "add", {"n": 1}, timeout_s=5)  # the episode is over, and says so
    assert after.error is not None and after.done, after
    await env.aclose()


BAD_ARGS = [
    {},
    {"n": "x"},
    {"n": None},
    {"n": [1]},
    {"n": 1.5},
    {"n": True},
    {"n": {"v": 1}},
    {"n": 1, "m": 2},
    {"m": 1},
]


def _error_type(obs: Any) -> str | None:
    """The error type of a tool observation: OpenEnv's own wire carries it as a dict."""
    error = obs.error
    if error is None:
        return None
    return error["error_type"] if isinstance(error, dict) else error.error_type


async def test_bad_tool_args_are_answered_and_leave_the_worker_up(
    worker_venvs: dict[str, Path],
) -> None:
    """Bridged OpenEnv speaks OpenEnv's wire (docs/interop.md): the foreign environment judges
    its own arguments, as under OpenEnv's server; a bad call is an error for the agent, never
    applied, and the worker stays up."""
    env = _env(worker_venvs["openenv"])
    await env.areset()
    pid = env.worker.pid
    # OpenEnv's FastMCP coerces as pydantic's lax mode does (True is 1, an extra key is
    # ignored): what it refuses under its own server, it refuses here
    for arguments in [a for a in BAD_ARGS if a not in ({"n": True}, {"n": 1, "m": 2})]:
        obs = await _call(env, "add", arguments)
        assert _error_type(obs) in ("invalid_args", "execution_error"), arguments
        assert not obs.done, arguments
    nope = await _call(env, "ad", {"n": 1})
    assert _error_type(nope) is not None
    failed = await _call(env, "fail")  # the foreign tool's own failure: data for the agent
    assert _error_type(failed) == "execution_error"
    assert env.worker.pid == pid and _alive(pid)
    assert _error_type(await _call(env, "add", {"n": 5})) is None
    assert (await _call(env, "peek")).error is None
    await env.aclose()


async def test_worker_that_never_starts(worker_venvs: dict[str, Path]) -> None:
    env = bridge_environment(
        "openenv",
        "never_starts:Nothing",
        python=worker_venvs["openenv"],
        paths=[FIXTURES],
        start_timeout_s=3,
    )()
    started = time.monotonic()
    with pytest.raises(ExecutionError) as err:  # a client-facing error: no paths, no traceback
        await env.areset()
    assert 3 <= time.monotonic() - started < 15
    assert err.value.detail["reason"] == "start_timeout" and "within 3.0 s" in err.value.message
    assert env.worker is None
    await env.aclose()


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("no_such_module:Env", "No module named 'no_such_module'"),
        ("json:JSONDecoder", "not an OpenEnv Environment"),
    ],
)
async def test_worker_that_cannot_load(
    worker_venvs: dict[str, Path], target: str, says: str
) -> None:
    env = bridge_environment("openenv", target, python=worker_venvs["openenv"], paths=[FIXTURES])()
    with pytest.raises(ExecutionError) as err:  # a client-facing error: no paths, no traceback
        await env.areset()
    assert err.value.detail["reason"] == "load_failed" and says in err.value.message, err.value
    assert err.value.code == "EXECUTION_ERROR"
    await env.aclose()


def test_bad_configuration_is_refused_at_once(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an executable"):
        bridge_environment("openenv", TARGET, python=tmp_path / "nope")
    with pytest.raises(ValueError, match="unknown bridge backend"):
        bridge_environment("gym", TARGET, python=sys.executable)
    with pytest.raises(ValueError, match="MODULE:ATTR"):
        bridge_environment("openenv", "no_colon", python=sys.executable)


async def test_failed_reset_kills_the_worker(worker_venvs: dict[str, Path]) -> None:
    env = _env(worker_venvs["openenv"])
    await env.areset()
    pid = env.worker.pid
    with pytest.raises(ExecutionError, match="reset failed in the worker"):
        await env.areset(start="not a number")
    assert env.worker is None and not _alive(pid)
    await env.areset(start=3)
    assert (await _call(env, "peek")).result["data"] == {"total": 3}
    await env.aclose()


async def test_close_kills_the_process_group(worker_venvs: dict[str, Path]) -> None:
    env = _env(worker_venvs["openenv"])
    await env.areset()
    pid = env.worker.pid
    assert os.getpgid(pid) == pid  # the worker leads its own process group
    child = (await _call(env, "spawn")).result["data"]
    assert _alive(child) and os.getpgid(child) == pid
    await env.aclose()
    assert not _alive(pid)
    wait_until(lambda: not _alive(child), timeout=10, what="the worker's child killed")


HOST = """
import asyncio, json, sys
from mcpgym import CallToolAction
from mcpgym.integrations.bridge import bridge_environment
env = bridge_environment("openenv", sys.argv[2], python=sys.argv[1], paths=[sys.argv[3]])()
async def main():
    await env.areset()
    child = (await env.astep(CallToolAction(tool_name="spawn", arguments={}))).result["data"]
    print(json.dumps({"worker": env.worker.pid, "child": child}), flush=True)
    await asyncio.sleep(3600)
asyncio.run(main())
"""


def test_worker_dies_with_its_host(worker_venvs: dict[str, Path]) -> None:
    """SIGKILL leaves no atexit hook: the worker's parent watch ends its whole group."""
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(worker_venvs["openenv"]), TARGET, str(FIXTURES)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert host.stdout is not None
        pids = json.loads(host.stdout.readline())
        assert _alive(pids["worker"]) and _alive(pids["child"])
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=30)
        if host.stdout is not None:
            host.stdout.close()
    wait_until(lambda: not _alive(pids["worker"]), timeout=15, what="the orphaned worker gone")
    wait_until(lambda: not _alive(pids["child"]), timeout=15, what="its child gone")


def test_sync_reset_and_step_play_in_process(worker_venvs: dict[str, Path]) -> None:
    """Without an event loop, `reset()` starts the worker as `areset()` does, and `step()`
    reaches it; before the fix a sync reset published no tools at all."""
    env = _env(worker_venvs["openenv"])
    try:
        obs = env.reset(seed=3)
        assert obs is not None and env.worker is not None  # OpenEnv's own reset observation
        assert {t.name for t in env.visible_tools()} >= {"add", "peek", "submit"}
        step = env.step(CallToolAction(tool_name="add", arguments={"n": 2}))
        assert step.error is None, step
        pid = env.worker.pid
        env.reset()  # a second episode keeps the healthy worker
        assert env.worker is not None and env.worker.pid == pid
    finally:
        asyncio.run(env.aclose())


async def test_sync_reset_inside_a_running_loop_is_refused(worker_venvs: dict[str, Path]) -> None:
    env = _env(worker_venvs["openenv"])
    with pytest.raises(RuntimeError, match="areset"):
        env.reset()
    assert env.worker is None  # nothing was started
    await env.aclose()
