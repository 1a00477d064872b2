"""Patched templates (calendar_gym/world/store.py): built once per (version, now, patch), copied per
reset, and nothing a session does reaches the template, a later reset or another session.

Every table of the world (`TABLES`) is written in every way a session can (update each column
of every row, delete rows, insert a row) after a reset from a shared patched template; a fresh
reset and a session opened before stay byte-identical to the untouched world. The patch object
is a key too: changing it in place must give the changed world, never the cached one.
"""

from __future__ import annotations

import copy
import json
import sqlite3
import threading
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.world.schema import TABLES
from calendar_gym.world.store import Store, patch_digest

NOW = "2026-03-04T14:00:00Z"


def patch(n: int, tag: str = "P") -> dict[str, Any]:
    """`n` patched events on alice's calendar, plus one patched row in every other section."""
    events = [
        {
            "calendar": "alice@acme.test",
            "summary": f"{tag}{i}",
            "start": f"2026-03-{1 + i % 28:02d}T{8 + i % 10:02d}:00:00",
            "end": f"2026-03-{1 + i % 28:02d}T{8 + i % 10:02d}:30:00",
            "attendees": ["bob@acme.test"],
        }
        for i in range(n)
    ]
    return {
        "users": [{"email": "zoe@acme.test", "name": "Zoe Park", "time_zone": "Europe/Paris"}],
        "groups": [{"email": "ops@acme.test", "name": "Ops", "members": ["zoe@acme.test"]}],
        "calendars": [
            {
                "id": "ops@group.calendar.google.com",
                "summary": "Ops",
                "owner": "zoe@acme.test",
                "time_zone": "Europe/Paris",
            }
        ],
        "acl": [
            {
                "calendar": "ops@group.calendar.google.com",
                "scope": "group:ops@acme.test",
                "role": "writer",
            }
        ],
        "calendar_list": [
            {
                "user": "alice@acme.test",
                "calendar": "ops@group.calendar.google.com",
                "summary_override": "Operations",
            }
        ],
        "events": events,
        "settings": [{"user": "zoe@acme.test", "id": "weekStart", "value": "1"}],
    }


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    return [(row[1], row[2].upper()) for row in conn.execute(f"PRAGMA table_info({table})")]


def vandalise(store: Store) -> None:
    """Write every table every way: change every column of every row, delete a row, and insert
    one (a copy of a row with its key changed). The session's counter and clock move too."""
    conn = store.conn
    for table, key in TABLES.items():
        columns = _columns(conn, table)
        first = conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchone()
        assert first is not None, f"the patched world has no {table} row"
        changed = 0
        for name, kind in columns:  # one column at a time: some have CHECK constraints
            new = f"{name} + 1" if kind in ("INTEGER", "REAL") else f"{name} || '~'"
            try:
                changed += conn.execute(f"UPDATE OR REPLACE {table} SET {name} = {new}").rowcount
            except sqlite3.IntegrityError:
                continue  # a value the schema refuses: a session cannot write it either
        assert changed, f"nothing in {table} could be changed"
        where = " AND ".join(f"{k} = ?" for k in key)
        row = conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchone()
        conn.execute(f"DELETE FROM {table} WHERE {where}", [row[k] for k in key])
        names = [name for name, _ in columns]
        values = [f"{first[n]}!" if n in key else first[n] for n in names]
        conn.execute(
            f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' * len(names))})",
            values,
        )
    store.new_event_id()
    store.tick()


@pytest.mark.parametrize("n", [0, 100, 1000])
def test_a_session_changes_nothing_outside_itself(n: int) -> None:
    seed_patch = patch(n)
    before = Store.create(seed=3, now=NOW, seed_patch=seed_patch)  # open during the damage
    original = before.dump()
    victim = Store.create(seed=3, now=NOW, seed_patch=seed_patch)
    vandalise(victim)
    assert victim.dump() != original
    assert before.dump() == original
    fresh = Store.create(seed=3, now=NOW, seed_patch=seed_patch)
    assert fresh.dump() == original
    assert fresh.new_event_id() == Store.create(seed=3, now=NOW, seed_patch=patch(n)).new_event_id()
    for store in (before, victim, fresh):
        store.close()


def test_sessions_in_threads_each_get_the_untouched_world() -> None:
    seed_patch = patch(200)
    original = Store.create(seed=1, now=NOW, seed_patch=seed_patch).dump()
    dumps: list[str] = []
    errors: list[BaseException] = []

    def session() -> None:
        try:
            store = Store.create(seed=1, now=NOW, seed_patch=seed_patch)
            dumps.append(store.dump())
            vandalise(store)
            store.close()
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=session) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert dumps == [original] * 16


def test_a_patch_changed_in_place_is_a_new_world() -> None:
    seed_patch = patch(50)
    original = Store.create(now=NOW, seed_patch=seed_patch).dump()
    changes = [
        lambda p: p["events"][7].update(summary="renamed"),
        lambda p: p["events"].pop(),
        lambda p: p["events"].append(dict(p["events"][0], summary="one more")),
        lambda p: p["acl"][0].update(role="reader"),
        lambda p: p["users"][0].update(time_zone="Asia/Tokyo"),
        lambda p: p["settings"][0].update(value="3"),
        lambda p: p["groups"][0]["members"].append("alice@acme.test"),
        lambda p: p.pop("calendar_list"),
    ]
    seen = {original}
    for change in changes:
        change(seed_patch)
        changed = Store.create(now=NOW, seed_patch=seed_patch).dump()
        rebuilt = Store.create(now=NOW, seed_patch=copy.deepcopy(seed_patch)).dump()
        assert changed == rebuilt  # the same object, changed, gives what a new copy gives
        assert changed not in seen
        seen.add(changed)
    assert Store.create(now=NOW, seed_patch=patch(50)).dump() == original


def test_patch_digests_tell_patches_apart() -> None:
    base = patch(3)
    variants: list[Any] = [
        base,
        json.loads(json.dumps(base)),  # an equal copy, as parsed from the wire
        dict(base, events=base["events"][:2]),
        {"events": [dict(base["events"][0], attendees=["bob@acme.test", "alice@acme.test"])]},
        {"events": [dict(base["events"][0], start=1)]},
        {"events": [dict(base["events"][0], start=1.0)]},
        {"events": [dict(base["events"][0], start=True)]},
        {"events": [dict(base["events"][0], start=None)]},
        {"events": [dict(base["events"][0], start=("a",))]},
        {"events": [dict(base["events"][0], start=["a"])]},
        {"events": [dict(base["events"][0], start="2026-03-01T08:00:00")]},
    ]
    digests = [patch_digest(v) for v in variants]
    assert digests[0] == digests[1] == patch_digest(copy.deepcopy(base))
    assert len(set(digests[1:])) == len(variants) - 1


def test_env_resets_from_a_task_patch_are_isolated_and_deterministic() -> None:
    seed_patch = patch(300)
    a, b = CalendarEnv(), CalendarEnv()
    a.reset(seed=5, seed_patch=seed_patch)
    b.reset(seed=5, seed_patch=seed_patch)
    start = a.state_dump()
    vandalise(a.store)
    assert b.state_dump() == start
    a.reset(seed=5, seed_patch=seed_patch)
    assert a.state_dump() == start
    a.close()
    b.close()
