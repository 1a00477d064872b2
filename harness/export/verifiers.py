"""`mcpgym export verifiers URL --out DIR`: write a verifiers 0.4.0 `verifiers.v1` taskset package.

The package (a pyproject and one module, text in harness/export/verifiers_template.py) carries the
server's tasks as they are now (its task set's splits, or one task per `--seed` for an
environment without a task set, each prompt read from a real `reset`). Each rollout opens its own
episode on the simulation server, reset with its task's options (`POST /mcp/episodes`), plays it
over the spec MCP endpoint (`/mcp?episode=ID`) and is scored by that episode's own record.
What maps and what does not is in docs/interop.md ("Export to Verifiers").
"""

from __future__ import annotations

import json
import keyword
import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx

from mcpgym.client.generic import SyncGenericEnvClient
from mcpgym.errors import MCPGymError

from .verifiers_template import MODULE, PYPROJECT

__all__ = ["ExportError", "collect_tasks", "tasks_of_target", "write_package"]

MAX_EXPORTED_TASKS = 1000
"""The most tasks one package carries; a larger set is refused (pass `--split` to pick one)."""


class ExportError(RuntimeError):
    """The server could not be read, or the package could not be written."""


def _prompt(observation: dict[str, Any]) -> str | None:
    """The reset observation's prompt, where environments put it (`prompt` or `metadata.prompt`)."""
    for source in (observation, observation.get("metadata") or {}):
        value = source.get("prompt") if isinstance(source, dict) else None
        if isinstance(value, str):
            return value
    return None


def _listed_prompts(http: httpx.Client, split: str, count: int) -> dict[str, str]:
    """`{"split/index": prompt}` of the split's task listing (a task set whose prompts live in
    its rows, as Calendar Gym's do, gives none at reset), read a page at a time."""
    prompts: dict[str, str] = {}
    start = 0
    while start < count:
        reply = http.get(f"/tasks/{split}", params={"start": start, "stop": count})
        reply.raise_for_status()
        rows = reply.json().get("tasks") or []
        if not rows:
            break
        for offset, row in enumerate(rows):
            if isinstance(row, dict) and isinstance(row.get("prompt"), str):
                prompts[f"{split}/{start + offset}"] = row["prompt"]
        start += len(rows)
    return prompts


def _resets(
    url: str, splits: list[str] | None, seeds: tuple[int, ...], token: str | None
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, str]]:
    """The tasks' names and reset options, and the prompts their listing carries."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        listing = http.get("/tasks")
        if listing.status_code == 404:  # a production server has no task routes
            raise ExportError(f"{url} serves no /tasks: point the export at a simulation server")
        listing.raise_for_status()
        known = {s["name"]: s["num_tasks"] for s in listing.json()["splits"]}
        wanted = list(known) if splits is None else splits
        if unknown := [s for s in wanted if s not in known]:
            raise ExportError(f"unknown split(s) {unknown}; the server has {sorted(known)}")
        total = sum(known[s] for s in wanted)
        if total > MAX_EXPORTED_TASKS:
            raise ExportError(f"{total} tasks exceed {MAX_EXPORTED_TASKS}; pick splits")
        listed = {k: v for s in wanted for k, v in _listed_prompts(http, s, known[s]).items()}
    resets: list[tuple[str, dict[str, Any]]] = [
        (f"{s}/{i}", {"split": s, "index": i}) for s in wanted for i in range(known[s])
    ]
    return resets or [(f"seed={n}", {"seed": n}) for n in seeds], listed


def collect_tasks(
    url: str,
    *,
    splits: list[str] | None = None,
    seeds: tuple[int, ...] = (1,),
    token: str | None = None,
) -> list[dict[str, Any]]:
    """The server's tasks as `{"name", "prompt", "reset"}`: each prompt from a real reset, else
    from the task's row in the listing (where Calendar Gym keeps it)."""
    try:
        resets, listed = _resets(url, splits, seeds, token)
        headers = {"Authorization": f"Bearer {token}"} if token else None
        tasks = []
        with SyncGenericEnvClient(url, headers=headers) as env:
            for name, reset in resets:
                observation = env.reset(**reset).observation
                prompt = _prompt(observation) or listed.get(name)
                tasks.append({"name": name, "prompt": prompt, "reset": reset})
        return tasks
    except (httpx.HTTPError, OSError, MCPGymError) as err:
        raise ExportError(f"cannot read tasks from mcpgym server {url}: {err}") from err


def _doc(text: str) -> str:
    """`text` escaped for a docstring: a quote or backslash in a URL must not end it."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'")


def write_package(
    out: Path, *, name: str, url: str, tools_url: str, tasks: list[dict[str, Any]], command: str
) -> Path:
    """Write `out/pyproject.toml` and `out/<name>/__init__.py`; returns the module path."""
    if not name.isidentifier() or keyword.iskeyword(name) or not name.isascii():
        raise ExportError(f"--name {name!r} must be an ASCII Python identifier, not a keyword")
    if name != name.lower():
        raise ExportError(f"--name {name!r} must be lower case (it is the taskset id)")
    for text in (url, tools_url, command):
        if any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise ExportError(f"control characters in {text!r}")
    values = {
        "@@VERSION@@": version("mcpgym"),
        "@@COMMAND@@": _doc(command),
        "@@NAME@@": name,
        "@@DIST@@": name.replace("_", "-"),
        "@@DESCRIPTION_TOML@@": json.dumps(f"verifiers v1 taskset for the mcpgym server at {url}"),
        "@@URL_LITERAL@@": repr(url),
        "@@TOOLS_URL_LITERAL@@": repr(tools_url),
        "@@TASKS_LITERAL@@": repr(json.dumps(tasks, ensure_ascii=False)),
        "@@URL@@": _doc(url),
    }

    def fill(text: str) -> str:
        # one pass: a marker inside a value (a URL may hold "@@URL@@") is not expanded again
        return re.sub(r"@@[A-Z_]+@@", lambda m: values[m.group(0)], text)

    module = out / name / "__init__.py"
    module.parent.mkdir(parents=True, exist_ok=True)
    (out / "pyproject.toml").write_text(fill(PYPROJECT), encoding="utf-8")
    module.write_text(fill(MODULE), encoding="utf-8")
    return module


def tasks_of_target(
    target: str, splits: list[str] | None, seeds: tuple[int, ...]
) -> list[dict[str, Any]]:
    """Tasks of an environment (`MODULE:ATTR` or installed name), from a server started here."""
    from mcpgym.discovery import environment_entry
    from mcpgym.validate.serve import LocalServer, ServerStartError

    resolved = target if ":" in target else environment_entry(target)
    if resolved is None:
        raise ExportError(f"{target!r} is neither a URL, MODULE:ATTR nor an installed environment")
    try:
        server = LocalServer(resolved, mode="simulation", startup_s=60).start()
    except ServerStartError as err:
        raise ExportError(f"cannot serve {resolved}: {err}") from err
    try:
        return collect_tasks(server.url, splits=splits, seeds=seeds)
    finally:
        server.stop()
