"""mcpgym's task routes in OpenEnv 0.10.0's shapes answer as OpenEnv's own server does.

The same task set (Calendar Gym's) is served by mcpgym and, in the openenv venv, by OpenEnv's own
`create_fastapi_app` over an OpenEnv `Environment`; the driver sends both the requests OpenEnv's
request models make. Bad requests (an OpenEnv server would 4xx/5xx) are checked against mcpgym
alone: structured errors, never a 5xx.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from calendar_gym.env import CalendarEnv
from helpers.compat import OPENENV_CLIENT, compat
from helpers.server import run_server
from mcpgym import SyncEnvClient
from mcpgym.servers import create_app

pytestmark = [pytest.mark.interop, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("openenv_tasks_driver.py")


def _task_data() -> dict[str, Any]:
    tasks = CalendarEnv.task_set
    splits = tasks.list_splits()
    return {
        "splits": [s.model_dump() for s in splits],
        "tasks": {s.name: tasks.list_tasks(s.name) for s in splits},
    }


@compat(
    OPENENV_CLIENT,
    "OpenEnv's task routes (HTTP)",
    "works",
    "splits, tasks, counts, one task and ranges answer as OpenEnv's own server does",
)
def test_same_answers_as_openenvs_own_server(openenv_python: Path) -> None:
    data = _task_data()
    assert sum(len(t) for t in data["tasks"].values()) > 0
    with run_server(create_app(CalendarEnv)) as running:
        proc = subprocess.run(
            [str(openenv_python), str(DRIVER), running.url, "CalendarEnv"],
            input=json.dumps(data),
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 2 + 9 * len(data["tasks"])
    for row in rows:
        assert row["openenv"][0] == 200, row
        assert row["mcpgym"] == row["openenv"], row["request"]


HOSTILE: list[tuple[str, str, Any]] = [
    ("GET", "/NoSuchEnv/splits", None),
    ("POST", "/NoSuchEnv/num_tasks", {"split": "v1"}),
    ("POST", "/CalendarEnv/num_tasks", {"split": "no-such-split"}),
    ("POST", "/CalendarEnv/task", {"split": "v1", "index": 10**9}),
    ("POST", "/CalendarEnv/task", {"split": "v1", "index": -(10**9)}),
    ("POST", "/CalendarEnv/task", {"split": "v1", "index": "0"}),
    ("POST", "/CalendarEnv/task", {"split": "v1"}),
    ("POST", "/CalendarEnv/task", {"split": "v1", "index": 0, "extra": 1}),
    ("POST", "/CalendarEnv/tasks", {"split": 3}),
    ("POST", "/CalendarEnv/tasks", None),
    ("POST", "/CalendarEnv/tasks", [1, 2]),
    ("POST", "/CalendarEnv/task_range", {"split": "v1", "start": "a"}),
    ("POST", "/CalendarEnv/task_range", {"split": "v1", "start": -1}),
    ("POST", "/CalendarEnv/task_range", {"split": "v1", "start": 5, "stop": 2}),
    ("POST", "/CalendarEnv/task_range", {"split": "v1", "start": 1.5}),
]


@pytest.mark.server
def test_bad_requests_get_structured_errors() -> None:
    with run_server(create_app(CalendarEnv)) as running, httpx.Client(timeout=30) as http:
        for method, path, body in HOSTILE:
            reply = http.request(method, running.url + path, json=body)
            assert reply.status_code in (404, 422), (path, body, reply.status_code, reply.text)
            error = reply.json()["error"]
            assert error["code"] and error["message"], error
        raw = http.post(running.url + "/CalendarEnv/num_tasks", content=b"{not json")
        assert raw.status_code == 422 and raw.json()["error"]["code"] == "VALIDATION_ERROR"
        # Case-insensitive environment name, as OpenEnv matches it.
        assert http.get(running.url + "/calendarenv/splits").status_code == 200
        # mcpgym's own routes still win where a path matches both shapes.
        assert "splits" in http.get(running.url + "/tasks").json()


@pytest.mark.server
def test_reset_by_split_and_index_plays_that_task() -> None:
    seen: list[str] = []
    with run_server(create_app(CalendarEnv)) as running, httpx.Client(timeout=30) as http:
        for index in (0, 2, 99):
            body = {"split": "v1", "index": index}
            task = http.post(f"{running.url}/CalendarEnv/task", json=body).json()["task"]
            by_index = http.post(f"{running.url}/reset", json=body)
            by_id = http.post(f"{running.url}/reset", json={"task_id": task["id"]})
            assert by_index.status_code == by_id.status_code == 200, by_index.text
            observation = by_index.json()["observation"]
            assert observation == by_id.json()["observation"]
            # a reset tells the agent nothing of its task (Calendar v3): the operator's state does
            with SyncEnvClient(running.url) as env:
                env.reset(**body)
                assert env.state().model_dump()["task"] == task["task"]
            seen.append(task["task"])
        assert len(set(seen)) == 3, seen  # three different tasks, not one default episode
