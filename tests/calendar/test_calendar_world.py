"""The versioned seed world, the package's public names, and the examples in docstrings/docs."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import calendar_gym
from calendar_gym import CALENDAR_IDS, EVENT_IDS, WORLD_VERSION
from calendar_gym.world.store import Store

DOC = Path(__file__).resolve().parents[2] / "docs" / "calendar_gym.md"
MODULES = sorted(m.name for m in pkgutil.iter_modules(calendar_gym.__path__, "calendar_gym."))


@pytest.fixture(scope="module")
def store() -> Store:
    return Store.create(now="2026-03-04T14:00:00Z")


def count(store: Store, sql: str) -> int:
    row = store.one(sql)
    assert row is not None
    return int(row[0])


def test_world_size(store: Store) -> None:
    assert WORLD_VERSION == "1"
    assert count(store, "SELECT count(*) FROM users") == 8
    assert count(store, "SELECT count(DISTINCT domain) FROM users") == 2
    assert count(store, "SELECT count(*) FROM groups") == 2
    assert count(store, "SELECT count(*) FROM calendars") == 25
    assert count(store, "SELECT count(*) FROM events") == 150


def test_deliberate_near_duplicates(store: Store) -> None:
    summaries = {r["summary"] for r in store.all("SELECT summary FROM calendars")}
    assert {"Marketing", "Marketing (Archive)"} <= summaries
    override = store.one(
        "SELECT summary_override FROM calendar_list WHERE user_email = 'alice@acme.test' "
        "AND calendar_id = ?",
        (CALENDAR_IDS["q2_planning"],),
    )
    assert override is not None and override[0] == "Roadmap"
    alexes = [r[0] for r in store.all("SELECT name FROM users WHERE name LIKE 'Alex %'")]
    assert sorted(alexes) == ["Alex Kim", "Alex Rivera"]
    syncs = store.all("SELECT calendar_id FROM events WHERE summary = 'Team Sync'")
    assert {r[0] for r in syncs} == {CALENDAR_IDS["engineering"], CALENDAR_IDS["marketing"]}
    one_on_one = store.one("SELECT recurrence FROM events WHERE id = ?", (EVENT_IDS["one_on_one"],))
    assert one_on_one is not None and "WEEKLY" in one_on_one[0]


def test_world_is_identical_across_builds(store: Store) -> None:
    again = Store.create(now="2026-03-04T14:00:00Z")
    assert again.dump() == store.dump()


def test_public_names() -> None:
    for name in calendar_gym.__all__:
        assert hasattr(calendar_gym, name), name


@pytest.mark.parametrize("module", MODULES)
def test_module_docstring_examples(module: str) -> None:
    mod = importlib.import_module(module)
    assert mod.__doc__, f"{module} has no docstring"
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_docs_examples_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert blocks, "docs/calendar_gym.md should have runnable examples"
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})


def test_seed_world_and_seed_events_do_not_import_each_other() -> None:
    """The ids both need live in `world.ids`: no import circle, no fill-by-side-effect."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "calendar_gym" / "world"
    for name, other in (("seed_events", "seed"), ("ids", "seed")):
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert f"calendar_gym.world.{other}" not in imported, name
