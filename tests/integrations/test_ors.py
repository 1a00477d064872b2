"""An ORS environment served by mcpgym (`mcpgym.integrations.ors`) plays as ORS itself plays it.

The same actions go to the ORS class directly (`setup`, `get_prompt`, `_call_tool`), through
ORS's own `ors.Server` + `ors.client.ORS` over HTTP, and through mcpgym's client to a real mcpgym
server serving the class unchanged; prompts, tool outputs, rewards and finished flags agree.
Needs `ors-sdk` (`just test-ors`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers.compat import ORS_ENV, compat
from helpers.mcp import MCPGYM
from helpers.server import run_server
from helpers.wait import wait_until
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.servers import create_app

ors = pytest.importorskip("ors", reason="just test-ors installs ors-sdk")
pytestmark = [pytest.mark.ors, pytest.mark.server]

from ors_guess import TASKS, ORSGuess  # noqa: E402

from mcpgym.integrations.ors import ors_environment  # noqa: E402

PLAYS: list[tuple[str, int, list[dict[str, Any]]]] = [
    ("train", 0, [{"n": 5}, {"n": 2}, {"n": 3}]),
    ("train", 1, [{"n": 7}]),
    ("test", 0, [{"n": 50}, {"n": 25}, {"n": 42}]),
]


async def _direct(split: str, index: int, moves: list[dict[str, Any]]) -> dict[str, Any]:
    env = ORSGuess(task_spec=TASKS[split][index])
    env.setup()
    prompt = [b.model_dump(mode="json") for b in env.get_prompt()]
    steps = []
    for args in moves:
        out = (await env._call_tool("guess", args)).root.output
        steps.append((out.model_dump(mode="json"), out.reward, out.finished))
    tries = (await env._call_tool("tries_so_far", {})).root.output
    env.teardown()
    return {"prompt": prompt, "steps": steps, "tries": tries.model_dump(mode="json")["blocks"]}


def _output(res: Any) -> dict[str, Any]:
    """An mcpgym step read back as the ORS output it served: its text content as blocks."""
    obs = res.observation
    blocks = [{"text": b["text"], "detail": None, "type": "text"} for b in obs.result]
    meta = {k: v for k, v in obs.metadata.items() if k != "tool_events"} or None
    return {"blocks": blocks, "metadata": meta, "reward": res.reward, "finished": res.done}


def _served(url: str, split: str, index: int, moves: list[dict[str, Any]]) -> dict[str, Any]:
    with SyncEnvClient(url) as client:
        first = client.reset(split=split, index=index)
        steps = []
        for args in moves:
            res = client.step(CallToolAction(tool_name="guess", arguments=args))
            steps.append((_output(res), res.reward, res.done))
        # after the end the call still runs (its blocks), but scores 0 (mcpgym counts the end once)
        tries = client.step(CallToolAction(tool_name="tries_so_far"))
        assert (tries.reward, tries.done) == (0.0, True)
        return {
            "prompt": first.observation.metadata["prompt"],
            "steps": steps,
            "tries": _output(tries)["blocks"],
        }


def _ors_http(url: str, split: str, index: int, moves: list[dict[str, Any]]) -> dict[str, Any]:
    """The same play through ORS's own server and client (`ors.Server` + `ors.client.ORS`)."""
    from ors.client import ORS

    with ORS(base_url=url) as client:
        env = client.environment("ORSGuess")
        with env.session(split=split, index=index) as session:
            prompt = [dataclasses.asdict(b) for b in session.get_prompt()]
            steps = []
            for args in moves:
                out = dataclasses.asdict(session.call_tool("guess", args))
                steps.append((out, out["reward"], out["finished"]))
            tries = dataclasses.asdict(session.call_tool("tries_so_far", {}))["blocks"]
    return {"prompt": prompt, "steps": steps, "tries": tries}


@compat(
    ORS_ENV,
    "mcpgym SyncEnvClient",
    "works",
    "the same actions give the ORS class's prompts, blocks, rewards and finished flags, "
    "as ors.Server + ORS's client give them",
)
def test_same_prompts_rewards_and_finished_flags() -> None:
    with (
        run_server(create_app(ors_environment(ORSGuess))) as running,
        run_server(ors.Server([ORSGuess]).app) as ors_server,
    ):
        for split, index, moves in PLAYS:
            want = asyncio.run(_direct(split, index, moves))
            assert _ors_http(ors_server.url, split, index, moves) == want, (split, index)
            got = _served(running.url, split, index, moves)
            assert got == want, (split, index)
            assert got["steps"][-1][1:] == (1.0, True)


def test_tasks_tools_and_errors() -> None:
    with (
        run_server(create_app(ors_environment(ORSGuess))) as running,
        SyncEnvClient(running.url) as client,
    ):
        splits = client.list_splits()
        assert [(s.name, s.type) for s in splits] == [("train", "train"), ("test", "test")]
        assert client.num_tasks("train") == 2
        assert client.get_task("test", 0)["reset"] == {"task_spec": TASKS["test"][0]}
        client.reset(task_id="train/1")
        names = sorted(t.name for t in client.list_tools())
        assert names == ["guess", "tries_so_far"]
        # ORS's own input model judges the arguments (as ors.Server does)
        for bad in ({}, {"n": "x"}, {"n": None}, {"n": [1]}, {"m": 1}, {"n": 1.5}):
            res = client.step(CallToolAction(tool_name="guess", arguments=bad))
            error = res.observation.error  # type: ignore[attr-defined]
            assert error is not None and error.error_type == "invalid_args", (bad, error)
            assert res.reward is None and not res.done
        # ORS's input models ignore unknown fields and read "7" as 7; served, the tool does too.
        ok = client.step(CallToolAction(tool_name="guess", arguments={"n": "7", "extra": 2}))
        assert (ok.reward, ok.done) == (1.0, True)
        res = client.step(CallToolAction(tool_name="nope"))
        assert res.observation.error.error_type == "tool_not_found"  # type: ignore[attr-defined]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@compat(
    ORS_ENV,
    "mcpgym serve --ors",
    "refused",
    "a class that is not an ors.Environment: exit 2 with one clear line",
)
def test_mcpgym_serve_ors_flag() -> None:
    port = _free_port()
    here = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    cmd = [*MCPGYM, "serve", "--ors", "ors_guess:ORSGuess", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                return httpx.get(f"{url}/health", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=60, what="mcpgym serve --ors")
        with SyncEnvClient(url) as client:
            first = client.reset(split="test", index=0)
            assert (
                first.observation.metadata["prompt"][0]["text"] == "Guess a number from 1 to 100."
            )
            res = client.step(CallToolAction(tool_name="guess", arguments={"n": 42}))
            assert (res.reward, res.done) == (1.0, True)
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=30)
    # Not an ORS class: a clear usage error, exit 2.
    bad = subprocess.run(
        [*MCPGYM, "serve", "--ors", "mcpgym.examples.guess:GuessEnv", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "not an ors.Environment subclass" in bad.stderr, bad.stderr
