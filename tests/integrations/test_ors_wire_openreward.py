"""openreward 0.1.167's client (a superset of ORS, in its own venv built here) plays Calendar Gym
over the ORS wire: the gold plans of v2 tasks, action for action, give it the rewards, finished
flags, results and grades mcpgym's own client gets. What openreward adds and mcpgym does not
serve is seen answered as its client expects: no `@terminal` tool, no group scoring (404, so
`ScoreGroupUnsupported`), no `/messages` (404, so the prompt as one user message).
Needs `ors-sdk` for the marker's suite and builds `.tools/openreward-venv` (`just test-ors`).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.agents.oracle import oracle_play
from calendar_gym.tasks.loader import load_suite
from helpers.compat import OPENREWARD_CLIENT, compat
from helpers.pinned_venv import pinned_venv
from helpers.server import run_server
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.servers import create_app

pytestmark = [pytest.mark.ors, pytest.mark.server, pytest.mark.timeout(900)]  # builds a venv

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MCPGYM_OPENREWARD_VENV", ROOT / ".tools" / "openreward-venv"))
OPENREWARD = "openreward==0.1.167"
DRIVER = Path(__file__).with_name("openreward_driver.py")
PLAYS = 12  # v2 rows (both phrasings of the first six tasks): the client's start-up is the cost


@pytest.fixture(scope="module")
def openreward_python() -> Path:
    """A virtual environment holding openreward 0.1.167 (built once, kept in .tools/)."""
    return pinned_venv(VENV, {"openreward": "0.1.167"})


def _own_play(client: SyncEnvClient, index: int, task_id: str) -> dict[str, Any]:
    """The gold plan through mcpgym's client: its actions and what each step gave."""
    client.reset(split="v2", index=index)
    play = oracle_play(load_suite("2").get(task_id))
    actions: list[list[Any]] = []
    steps: list[dict[str, Any]] = []
    try:
        action = next(play)
        while True:
            res = client.step(CallToolAction(**{k: action[k] for k in ("tool_name", "arguments")}))
            obs: Any = res.observation
            actions.append([action["tool_name"], action["arguments"]])
            error = obs.error.model_dump(mode="json") if obs.error is not None else None
            steps.append(
                {"reward": res.reward, "finished": res.done, "result": obs.result, "error": error}
                | ({"observation": obs.metadata} if obs.metadata else {})
            )
            action = play.send(res)
    except StopIteration:
        return {"actions": actions, "steps": steps}


def _seen(step: dict[str, Any]) -> dict[str, Any]:
    meta = dict(step["metadata"] or {})
    return {
        "reward": step["reward"],
        "finished": step["finished"],
        "result": meta.get("result"),
        "error": meta.get("error"),
    } | ({"observation": meta["observation"]} if "observation" in meta else {})


@compat(
    OPENREWARD_CLIENT,
    "openreward's environment client",
    "works",
    "plays Calendar Gym v2 episodes over --ors-wire, both path styles, equal to mcpgym's "
    "own client",
)
@pytest.mark.parametrize("variant", [None, "CalendarEnv"], ids=["bare-paths", "variant"])
def test_openreward_client_plays_calendar_v2(openreward_python: Path, variant: str | None) -> None:
    with (
        run_server(create_app(CalendarEnv, ors_wire=True)) as running,
        SyncEnvClient(running.url) as own,
    ):
        tasks = own.list_tasks("v2")
        want = [_own_play(own, i, tasks[i]["task"]) for i in range(PLAYS)]
        spec = {
            "url": running.url + ("/" if variant else ""),  # both spellings of the base URL
            "env": "CalendarEnv",
            "variant": variant,
            "split": "v2",
            "plays": [{"index": i, "actions": w["actions"]} for i, w in enumerate(want)],
        }
        done = subprocess.run(
            [str(openreward_python), str(DRIVER)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        assert "Ping failed" not in done.stderr, done.stderr[-4000:]  # /ping keeps sessions alive
        seen = json.loads(done.stdout)
        tools = sorted(t.name for t in own.list_tools())
        splits = [s.name for s in own.list_splits()]
    assert seen["splits"] == splits and "v2" in splits and seen["num_tasks"] == len(tasks)
    assert seen["tasks"] == tasks and seen["env_names"] == ["CalendarEnv"]
    assert seen["task_1"] == tasks[1] and seen["range"] == tasks[:3]
    assert seen["class_tools"] == tools
    assert seen["terminal_tool"] is None and seen["supports_score_group"] is False
    for index, (play, expected) in enumerate(zip(seen["plays"], want, strict=True)):
        prompt = [{"text": tasks[index]["prompt"], "detail": None, "type": "text"}]
        assert play["prompt"] == prompt
        assert play["messages"] == [{"role": "user", "blocks": prompt}]
        assert play["tools"] == tools and play["final_by_message"] is False
        assert play["score_group"] == "unsupported"
        assert play["version"]["version"]
        assert [_seen(s) for s in play["steps"]] == expected["steps"], tasks[index]["id"]
        last = expected["steps"][-1]
        assert (last["reward"], last["finished"]) == (1.0, True), tasks[index]["id"]
