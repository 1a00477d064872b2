"""`mcpgym export verifiers`'s writer, without verifiers: hostile names, URLs and task text either
give a clear `ExportError` (nothing written) or a package whose module parses and carries them
exactly. The package played by verifiers itself is tested in tests/verifiers/test_v1_taskset.py."""

from __future__ import annotations

import ast
import json
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from calendar_gym import CalendarEnv
from helpers.server import run_server
from mcpgym.harness.export.verifiers import ExportError, collect_tasks, write_package
from mcpgym.servers import create_app

HOSTILE_TEXT = [
    'a"""b',
    "a'''b",
    "back\\slash\\",
    '"\\"; import os; os.system("x") #',
    "ünïcode ☃ \u2028 line sep",
    "{braces} @@URL@@ %s",
    "",
]


def _constants(module: Path) -> dict[str, Any]:
    """Module-level `NAME = os.environ.get(KEY, LITERAL)` / `json.loads(LITERAL)` values."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found: dict[str, Any] = {"__doc__": ast.get_docstring(tree)}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            call = node.value
            if isinstance(call, ast.Call) and call.args:
                found[node.target.id] = ast.literal_eval(call.args[-1])
    return found


def _write(tmp_path: Path, **overrides: Any) -> Path:
    args: dict[str, Any] = {
        "name": "pkg",
        "url": "http://127.0.0.1:8000",
        "tools_url": "http://127.0.0.1:8000/mcp",
        "tasks": [{"name": "seed=1", "prompt": "p", "reset": {"seed": 1}}],
        "command": "mcpgym export verifiers http://127.0.0.1:8000 --out x",
    }
    return write_package(tmp_path, **{**args, **overrides})


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_hostile_urls_and_task_text_are_carried_exactly(tmp_path: Path, text: str) -> None:
    url = f"http://h/{text}"
    tasks = [{"name": text, "prompt": text, "reset": {"seed": 1, "note": text}}]
    module = _write(tmp_path, url=url, tools_url=url + "/mcp", tasks=tasks, command="cmd " + text)
    values = _constants(module)
    assert values["SERVER_URL"] == url and values["TOOLS_URL"] == url + "/mcp"
    assert json.loads(values["TASKS"]) == tasks
    assert url in values["__doc__"] and "cmd " + text in values["__doc__"]
    project = tomllib.loads((tmp_path / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["description"].endswith(url)
    assert project["tool"]["setuptools"]["packages"] == ["pkg"]


@pytest.mark.parametrize(
    "name", ["", "Bad", "class", "a-b", "1x", "../x", "a.b", "x y", "ñ", "None", "import"]
)
def test_bad_names_are_refused_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    with pytest.raises(ExportError, match="--name"):
        _write(tmp_path, name=name)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", ["\n", "\r", "\x00", "\x1b[31m", "\x7f"])
def test_control_characters_are_refused(tmp_path: Path, bad: str) -> None:
    for field in ("url", "tools_url", "command"):
        with pytest.raises(ExportError, match="control characters"):
            _write(tmp_path, **{field: f"http://h/{bad}"})
    assert list(tmp_path.iterdir()) == []


def test_calendar_gym_prompts_come_from_its_task_listing() -> None:
    """Calendar's reset observation has no prompt; its task rows do: every exported task has
    the row's prompt (a prompt-less task makes every vf-eval rollout fail)."""
    with run_server(create_app(CalendarEnv)) as server:
        tasks = collect_tasks(server.url, splits=["v2"])
        rows = httpx.get(f"{server.url}/tasks/v2", params={"stop": 200}, timeout=60).json()
    assert len(tasks) == 102
    assert [t["prompt"] for t in tasks] == [r["prompt"] for r in rows["tasks"]]
    assert all(isinstance(t["prompt"], str) and len(t["prompt"]) > 40 for t in tasks)
