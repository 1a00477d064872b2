"""ORS environments through `mcpgym serve --ors --ors-wire`, side by side with ORS's own server.

The same scripted policy plays each ORS class twice with ORS's own client (`ors.client.ORS`):
against the native `ors.Server([cls])` and against `mcpgym serve --ors MODULE:CLS --ors-wire`
(a real subprocess, as a user starts it). Everything the client reads must be equal: the class's
tools before any session, splits, the class's own task specs (listed, by index, by range), the
prompt's blocks (image and `detail` included), each session's tools, and on every step the
output's blocks, metadata, reward and `finished` — or the same refusal. mcpgym's own client
plays the same script over `/ws` and reads the same blocks as content. Needs `ors-sdk`
(`just test-ors`).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
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

from ors.client import ORS  # noqa: E402
from ors.client._types import Task, ToolCallError  # noqa: E402
from ors_guess import ORSGuess  # noqa: E402
from ors_shop import ORSShop  # noqa: E402

from mcpgym.integrations.ors import ors_environment  # noqa: E402

Move = tuple[str, dict[str, Any]]
# (how the session is opened, the moves); the policy stops at the first finished output
SCRIPTS: dict[str, list[tuple[dict[str, Any], list[Move]]]] = {
    "ORSShop": [
        (
            {"split": "train", "index": 0},
            [
                ("look", {}),
                ("balance", {}),
                ("stock", {"count": 2}),
                ("offer", {"amount": "20"}),  # ORS's input model coerces "20" to 20
                ("offer", {"amount": "x"}),  # refused by the input model
                ("offer", {}),
                ("offer", {"amount": [1]}),
                ("nope", {}),  # no such tool
                ("balance", {}),
                ("offer", {"amount": 30, "extra": 1}),  # unknown fields are ignored
                ("look", {}),  # not reached: the offer finished the episode
            ],
        ),
        ({"split": "train", "index": 1}, [("offer", {"amount": 85}), ("offer", {"amount": 95})]),
        ({"task": ("test", 0)}, [("balance", {}), ("offer", {"amount": 45})]),
        # a task spec no split lists: ORS's /create takes it as it is
        ({"task_spec": {"item": "pen", "price": 2, "budget": 5}}, [("offer", {"amount": 2})]),
    ],
    "ORSGuess": [
        (
            {"split": "train", "index": 0},
            [("guess", {"n": 5}), ("tries_so_far", {}), ("guess", {"n": 3})],
        ),
        ({"split": "test", "index": 0}, [("guess", {"n": "50"}), ("guess", {"n": 42})]),
        ({"task": ("train", 1)}, [("guess", {"n": None}), ("guess", {"n": 7})]),
    ],
}
CLASSES = {"ORSShop": ORSShop, "ORSGuess": ORSGuess}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, str]]:
    """`mcpgym serve --ors MODULE:CLS --ors-wire` for each class: its URL by class name."""
    here = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    procs: dict[str, tuple[subprocess.Popen[str], str]] = {}
    try:
        for name in CLASSES:
            port = _free_port()
            target = f"ors_{name.removeprefix('ORS').lower()}:{name}"
            cmd = [*MCPGYM, "serve", "--ors", target, "--ors-wire", "--port", str(port)]
            proc = subprocess.Popen(
                cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            procs[name] = (proc, f"http://127.0.0.1:{port}")
        for name, (proc, url) in procs.items():

            def up(proc: subprocess.Popen[str] = proc, url: str = url) -> bool:
                assert proc.poll() is None, proc.communicate()[1]
                try:
                    return httpx.get(f"{url}/health", timeout=1).status_code == 200
                except httpx.HTTPError:
                    return False

            wait_until(up, timeout=60, what=f"mcpgym serve --ors {name} --ors-wire")
        yield {name: url for name, (_, url) in procs.items()}
    finally:
        for proc, _ in procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
            proc.communicate(timeout=30)


def _listing(env: Any) -> dict[str, Any]:
    splits = env.list_splits()
    return {
        "tools": env.list_tools(),
        "openai_tools": env.list_tools(format="openai"),
        "splits": splits,
        "tasks": {s: [t.task_spec for t in env.list_tasks(s)] for s in splits},
        "counts": {s: env.num_tasks(s) for s in splits},
        "first": {s: env.get_task(s, 0).task_spec for s in splits},
        "range": {s: [t.task_spec for t in env.get_task_range(s, 0, 2)] for s in splits},
    }


def _open(env: Any, how: dict[str, Any]) -> Any:
    if "task" in how:
        return env.session(task=env.get_task(*how["task"]))
    if "task_spec" in how:
        return env.session(task=Task(env.name, how["task_spec"]))
    return env.session(split=how["split"], index=how["index"])


def _play(url: str, name: str) -> dict[str, Any]:
    """The whole script through ORS's own client: what it read, in order."""
    with ORS(base_url=url) as client:
        env = client.environment(name)
        record: dict[str, Any] = {"listing": _listing(env), "episodes": []}
        for how, moves in SCRIPTS[name]:
            with _open(env, how) as session:
                episode: dict[str, Any] = {
                    "prompt": session.get_prompt(),
                    "tools": session.list_tools(),
                    "steps": [],
                }
                for tool, args in moves:
                    try:
                        out = session.call_tool(tool, args)
                    except ToolCallError as exc:
                        # the message is ORS's own for a refused input; for an unknown tool
                        # mcpgym words it itself (with near names): compared as a refusal
                        said = str(exc) if tool in CLASSES_TOOLS[name] else "no such tool"
                        episode["steps"].append(("refused", tool, said))
                        continue
                    episode["steps"].append((tool, dataclasses.asdict(out)))
                    if out.finished:
                        break
                record["episodes"].append(episode)
    return record


CLASSES_TOOLS = {
    n: {"look", "balance", "offer", "stock", "haggle", "guess", "tries_so_far"} for n in CLASSES
}


@compat(
    ORS_ENV,
    "ors.client.ORS over --ors-wire",
    "works",
    "tools before a session, splits, the class's own task specs, prompt blocks (image and "
    "detail), session tools and every step's blocks, metadata, reward and finished equal "
    "ors.Server's; refusals of bad input carry ORS's own message",
)
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_ors_client_reads_the_same_as_from_ors_server(name: str, served: dict[str, str]) -> None:
    with run_server(ors.Server([CLASSES[name]]).app) as native:
        want = _play(native.url, name)
    got = _play(served[name], name)
    assert got["listing"] == want["listing"]
    assert got["listing"]["tools"], "the class's tools are listed before any session"
    assert len(got["episodes"]) == len(want["episodes"])
    for index, (g, w) in enumerate(zip(got["episodes"], want["episodes"], strict=True)):
        assert g["prompt"] == w["prompt"], index
        assert g["tools"] == w["tools"], index
        assert g["steps"] == w["steps"], index
        assert g["steps"][-1][1]["finished"] is True, index
    if name == "ORSShop":  # the blocks are the environment's own text, not a dump of the output
        sold = got["episodes"][0]["steps"][-1][1]
        assert [b["text"] for b in sold["blocks"] if b["type"] == "text"] == ["Correct! Sold."]
        assert sold["metadata"] == {"paid": 30, "offers": [20, 30]}
        assert got["episodes"][0]["steps"][3][1]["blocks"][0]["detail"] == {"offers": 1}


@compat(
    ORS_ENV,
    "ors.client.ORS over --ors-wire",
    "lossy",
    "a call after the output that finished the episode runs and shows its blocks, but scores "
    "0.0 and stays finished: mcpgym counts the end once, as on its /ws and refuses on "
    "/mcp episodes (test_after_done_transports.py); ors.Server passes on whatever the class "
    "returns (here reward None, finished False), so a summing client may count the end again",
)
def test_a_call_after_finished_scores_nothing(served: dict[str, str]) -> None:
    def after_the_end(url: str) -> dict[str, Any]:
        with ORS(base_url=url) as client:
            env = client.environment("ORSShop")
            with env.session(split="test", index=0) as session:
                assert session.call_tool("offer", {"amount": 45}).finished
                return dataclasses.asdict(session.call_tool("look", {}))

    with run_server(ors.Server([ORSShop]).app) as running:
        native = after_the_end(running.url)
    mcpgym = after_the_end(served["ORSShop"])
    assert (
        mcpgym["blocks"]
        == native["blocks"]
        == [{"text": "A chair.", "detail": None, "type": "text"}]
    )
    assert (native["reward"], native["finished"]) == (None, False)
    assert (mcpgym["reward"], mcpgym["finished"]) == (0.0, True)


@compat(
    ORS_ENV,
    "ors.client.ORS over --ors-wire",
    "lossy",
    "a tool that raises: the call is the stream's error and ORS's client raises, as from "
    "ors.Server, and the session plays on; the message is mcpgym's structured error naming the "
    "exception (ors.Server sends the bare text), and the call counts as a step",
)
def test_a_tool_that_raises_is_the_calls_error(served: dict[str, str]) -> None:
    def play(url: str) -> tuple[str, dict[str, Any]]:
        with ORS(base_url=url) as client:
            env = client.environment("ORSShop")
            with env.session(split="test", index=0) as session:
                with pytest.raises(RuntimeError) as caught:
                    session.call_tool("haggle", {})
                return str(caught.value), dataclasses.asdict(
                    session.call_tool("offer", {"amount": 45})
                )

    with run_server(ors.Server([ORSShop]).app) as running:
        native = play(running.url)
    mcpgym = play(served["ORSShop"])
    assert mcpgym[1] == native[1] and native[1]["finished"] is True
    assert "the shopkeeper is not amused" in native[0]
    assert "RuntimeError: the shopkeeper is not amused" in mcpgym[0]
    assert "Traceback" not in mcpgym[0] and "/" not in mcpgym[0].split("amused")[0]


def _blocks_as_content(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for b in blocks:
        if b["type"] == "image":
            out.append({"type": "image", "data": b["data"], "mimeType": b["mimeType"]})
        else:
            out.append({"type": "text", "text": b["text"]})
    return out


@compat(
    ORS_ENV,
    "mcpgym SyncEnvClient over /ws",
    "lossy",
    "the same script: every step's blocks are the result as MCP content, the output's "
    "metadata the observation's, reward and done equal; a block's detail has no place in MCP "
    "content and is not carried",
)
def test_mcpgym_client_reads_the_blocks_as_content(served: dict[str, str]) -> None:
    with run_server(ors.Server([ORSShop]).app) as native:
        want = _play(native.url, "ORSShop")
    with SyncEnvClient(served["ORSShop"]) as client:
        for (how, moves), episode in zip(SCRIPTS["ORSShop"], want["episodes"], strict=True):
            if "task" in how:
                client.reset(split=how["task"][0], index=how["task"][1])
            elif "task_spec" in how:
                client.reset(task_spec=how["task_spec"])
            else:
                client.reset(**how)
            steps = iter(episode["steps"])
            for tool, args in moves:
                res = client.step(CallToolAction(tool_name=tool, arguments=args))
                obs: Any = res.observation
                seen = next(steps)
                if seen[0] == "refused":
                    assert obs.error is not None, (tool, args)
                    assert obs.error.error_type in ("invalid_args", "tool_not_found")
                    assert res.reward is None and not res.done
                    continue
                out = seen[1]
                assert obs.error is None and obs.result == _blocks_as_content(out["blocks"])
                meta = {k: v for k, v in obs.metadata.items() if k != "tool_events"}
                assert meta == (out["metadata"] or {})
                assert (res.reward, res.done) == (out["reward"], out["finished"])
                if res.done:
                    break


@compat(
    ORS_ENV,
    "ors.client.ORS over --ors-wire",
    "works",
    "an environment on ORS's index-based task API (num_tasks and get_task, list_tasks not "
    "implemented): counts, tasks by index and range, and a session by split and index equal "
    "ors.Server's",
)
def test_an_index_based_task_api() -> None:
    from ors_shop import ORSCatalogue

    def read(url: str) -> dict[str, Any]:
        with ORS(base_url=url) as client:
            env = client.environment("ORSCatalogue")
            seen: dict[str, Any] = {
                "count": env.num_tasks("train"),
                "task": env.get_task("train", 99_999).task_spec,
                "range": [t.task_spec for t in env.get_task_range("train", 70, 73)],
            }
            with env.session(split="test", index=41) as session:
                seen["prompt"] = session.get_prompt()
                seen["offer"] = dataclasses.asdict(session.call_tool("offer", {"amount": 41}))
        return seen

    with run_server(ors.Server([ORSCatalogue]).app) as native:
        want = read(native.url)
    with run_server(create_app(ors_environment(ORSCatalogue), ors_wire=True)) as served:
        got = read(served.url)
    assert got == want and want["count"] == 100_000 and want["offer"]["finished"] is True
