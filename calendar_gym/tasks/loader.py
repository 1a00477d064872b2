"""Load a versioned task suite from its JSON files (`calendar_gym/tasks/v<N>/*.json`).

Each file holds one tier: `{"version": "1", "tier": "T2", "tasks": [...]}`. A version may also
have `_world.json`, a seed patch (the `seed_patch` format) added to every task of that version
before the task's own patch: suite v2 uses it for near-duplicates visible by default (a second
Dana, a second "Marketing", older events with the same titles). Strings may name seed
world ids symbolically, so the files stay readable and follow the world: `{cal:marketing}` is
`CALENDAR_IDS["marketing"]` and `{event:one_on_one}` is `EVENT_IDS["one_on_one"]` (the explicit
phrasing then shows the real id). Every task is validated by the pydantic `Task` model; a bad file
raises `SuiteError` naming the file and task.

Example:
    >>> suite = load_suite("1")
    >>> len(suite.tasks) >= 48, suite.get(suite.tasks[0].id) is suite.tasks[0]
    (True, True)
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

from pydantic import ValidationError

from calendar_gym.events.rules import LATEST
from calendar_gym.tasks.model import Task
from calendar_gym.world.seed import CALENDAR_IDS, EVENT_IDS

__all__ = ["LATEST", "VERSIONS", "Suite", "SuiteError", "expand_ids", "get_task", "load_suite"]

VERSIONS = ("1", "2", "3")
"""Every released suite version (each stays loadable and reproducible)."""

_PLACEHOLDER = re.compile(r"\{(cal|event):([a-z0-9_]+)\}")


class SuiteError(ValueError):
    """A task file that cannot be loaded (the message names the file and the task)."""


@dataclass(frozen=True, slots=True)
class Suite:
    """The tasks of one suite version, in file order (T1 first)."""

    version: str
    tasks: tuple[Task, ...]

    def get(self, task_id: str) -> Task:
        """The task `task_id`; `KeyError` listing near ids otherwise."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        near = [t.id for t in self.tasks if task_id.split("-")[0] in t.id][:5]
        raise KeyError(f"no task {task_id!r} in suite v{self.version}; e.g. {near}")

    def by_tier(self) -> dict[str, list[Task]]:
        """Tasks grouped by tier, tiers in order."""
        out: dict[str, list[Task]] = {}
        for task in self.tasks:
            out.setdefault(task.tier, []).append(task)
        return dict(sorted(out.items()))

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)


def _expand(text: str, where: str) -> str:
    def sub(m: re.Match[str]) -> str:
        table = CALENDAR_IDS if m[1] == "cal" else EVENT_IDS
        if m[2] not in table:
            raise SuiteError(f"{where}: unknown {m[1]} key {m[2]!r}")
        return table[m[2]]

    return _PLACEHOLDER.sub(sub, text)


def expand_ids(value: Any, where: str = "task") -> Any:
    """`value` with every `{cal:key}` / `{event:key}` placeholder replaced by the seed id.

    Example:
        >>> expand_ids({"calendarId": "{cal:marketing}"})["calendarId"].startswith("c_")
        True
    """
    if isinstance(value, str):
        return _expand(value, where)
    if isinstance(value, list):
        return [expand_ids(v, where) for v in value]
    if isinstance(value, dict):
        return {_expand(k, where): expand_ids(v, where) for k, v in value.items()}
    return value


def _read(version: str) -> list[tuple[str, dict[str, Any]]]:
    folder = resources.files("calendar_gym.tasks").joinpath(f"v{version}")
    if not folder.is_dir():
        raise SuiteError(f"no task suite version {version!r} (no folder tasks/v{version})")
    files = sorted(
        (f for f in folder.iterdir() if f.name.endswith(".json") and not f.name.startswith("_")),
        key=lambda f: f.name,
    )
    out = []
    for f in files:
        try:
            out.append((f.name, json.loads(f.read_text(encoding="utf-8"))))
        except ValueError as exc:
            raise SuiteError(f"{f.name}: not valid JSON: {exc}") from None
    return out


def world_patch(version: str) -> dict[str, list[dict[str, Any]]]:
    """The seed patch every task of suite `version` starts from (`_world.json`; may be empty)."""
    f = resources.files("calendar_gym.tasks").joinpath(f"v{version}", "_world.json")
    if not f.is_file():
        return {}
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SuiteError(f"v{version}/_world.json: not valid JSON: {exc}") from None
    return expand_ids(data, f"v{version}/_world.json")


def _with_world(world: dict[str, list[Any]], patch: dict[str, Any] | None) -> dict[str, Any] | None:
    if not world:
        return patch
    merged: dict[str, list[Any]] = {k: list(v) for k, v in world.items()}
    for section, rows in (patch or {}).items():
        merged.setdefault(section, []).extend(rows)
    return merged


@functools.lru_cache(maxsize=4)
def load_suite(version: str = LATEST) -> Suite:
    """Load and validate suite `version` (cached per process)."""
    version = str(version)
    tasks: list[Task] = []
    world = world_patch(version) if version in VERSIONS else {}
    for name, data in _read(version):
        if str(data.get("version")) != version:
            raise SuiteError(f"{name}: version {data.get('version')!r}, expected {version!r}")
        for i, raw in enumerate(data.get("tasks", [])):
            where = f"{name} task {raw.get('id', i)!r}"
            raw = dict(raw)
            raw.setdefault("tier", data.get("tier"))
            raw["suite"] = version
            try:
                raw = expand_ids(raw, where)
                raw["seed_patch"] = _with_world(world, raw.get("seed_patch"))
                task = Task.model_validate(raw)
            except ValidationError as exc:
                raise SuiteError(f"{where}: {exc}") from None
            tasks.append(task)
    ids = [t.id for t in tasks]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise SuiteError(f"suite v{version}: duplicate task ids {dupes}")
    return Suite(version, tuple(tasks))


def get_task(task_id: str, version: str = LATEST) -> Task:
    """One task of suite `version`."""
    return load_suite(version).get(task_id)
