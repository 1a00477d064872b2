"""Runs in the openenv==0.10.0 venv (not collected by pytest: no `test_` prefix).

Serves the given tasks through OpenEnv's own HTTP server (`create_fastapi_app` over an OpenEnv
`Environment` with the task methods), then sends the same Task-API requests, with bodies made by
OpenEnv's own request models, to it and to the mcpgym server. Prints one JSON line per request:
`{"request", "openenv": [status, body], "mcpgym": [status, body]}`.

    python openenv_tasks_driver.py MCPGYM_URL ENV_NAME < tasks.json  # {"splits", "tasks"}
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from typing import Any

import httpx
import uvicorn
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import (
    Action,
    GetTaskRangeRequest,
    GetTaskRequest,
    ListTasksRequest,
    NumTasksRequest,
    Observation,
    State,
)

# the task data comes on stdin: with two suite versions it outgrows one argv string
MCPGYM_URL, NAME, DATA = sys.argv[1], sys.argv[2], json.loads(sys.stdin.read())
SPLITS: list[dict[str, Any]] = DATA["splits"]
TASKS: dict[str, list[dict[str, Any]]] = DATA["tasks"]


class Mirror(Environment):
    """An OpenEnv environment whose task methods return the given tasks."""

    def reset(self, seed: Any = None, episode_id: Any = None, **kwargs: Any) -> Observation:
        return Observation()

    def step(self, action: Any, timeout_s: Any = None, **kwargs: Any) -> Observation:
        return Observation()

    @property
    def state(self) -> State:
        return State()

    def list_splits(self) -> list[Any]:
        return SPLITS

    def list_tasks(self, split: str) -> list[Any]:
        return TASKS[split]

    def num_tasks(self, split: str) -> int:
        return len(TASKS[split])

    def get_task(self, split: str, index: int) -> Any:
        return TASKS[split][index]

    def get_task_range(self, split: str, start: Any = None, stop: Any = None) -> list[Any]:
        return TASKS[split][start:stop]


def serve() -> str:
    app = create_fastapi_app(Mirror, Action, Observation, env_name=NAME)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline:
            raise SystemExit("OpenEnv's server did not start within 60 s")
        time.sleep(0.05)
    return url


def main() -> None:
    openenv_url = serve()
    requests: list[tuple[str, str, dict[str, Any] | None]] = [
        ("GET", "/list_environments", None),
        ("GET", f"/{NAME}/splits", None),
    ]
    for split in TASKS:
        count = len(TASKS[split])
        requests += [
            ("POST", f"/{NAME}/tasks", ListTasksRequest(split=split).model_dump()),
            ("POST", f"/{NAME}/num_tasks", NumTasksRequest(split=split).model_dump()),
            ("POST", f"/{NAME}/task", GetTaskRequest(split=split, index=0).model_dump()),
            ("POST", f"/{NAME}/task", GetTaskRequest(split=split, index=count - 1).model_dump()),
        ]
        for start, stop in [(None, None), (0, 2), (1, None), (None, 3), (count - 1, count)]:
            body = GetTaskRangeRequest(split=split, start=start, stop=stop).model_dump()
            requests.append(("POST", f"/{NAME}/task_range", body))
    with httpx.Client(timeout=60) as http:
        for method, path, body in requests:
            row: dict[str, Any] = {"request": [method, path, body]}
            for who, base in (("openenv", openenv_url), ("mcpgym", MCPGYM_URL)):
                reply = http.request(method, base + path, json=body)
                row[who] = [reply.status_code, reply.json()]
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
