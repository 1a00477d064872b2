"""One session's database: an in-memory SQLite copy of the seed world.

The seed world is built once per process per world version into a template connection; each
session gets its own in-memory database through SQLite's backup API (a page copy, well under a
millisecond), so sessions never share state. Ids come from a counter seeded per episode, and
timestamps from a logical clock that starts at the episode's frozen "now", so the same seed and
the same calls give a byte-identical `dump()`.

Example:
    >>> store = Store.create(seed=7, now="2026-03-04T14:00:00Z")
    >>> store.one("SELECT count(*) AS n FROM users")["n"]
    8
    >>> store.new_event_id() == Store.create(seed=7, now="2026-03-04T14:00:00Z").new_event_id()
    True

`SHARED_WORLDS` holds the worlds several sessions act on together. Simulation sessions each get
a private copy; a live service is different: in production mode the server builds one
`CalendarEnv` per authenticated principal, and a calendar Alice shares must become readable by
Bob, so those instances attach to one shared `Store` by key. The registry counts references; the
world is closed when the last session detaches.

    >>> a = SHARED_WORLDS.acquire("demo", lambda: Store.create(now="2026-03-04T14:00:00Z"))
    >>> b = SHARED_WORLDS.acquire("demo", lambda: Store.create(now="2026-03-04T14:00:00Z"))
    >>> a is b
    True
    >>> SHARED_WORLDS.release("demo"); SHARED_WORLDS.release("demo"); "demo" in SHARED_WORLDS
    False
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import marshal
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from typing import Any

from calendar_gym.world.loader import load
from calendar_gym.world.schema import DDL, TABLES
from calendar_gym.world.seed import WORLD_VERSION, world_data
from calendar_gym.world.timeutil import parse_rfc3339

__all__ = ["SHARED_WORLDS", "SharedWorlds", "Store", "patch_digest", "state_hash"]

_TEMPLATES: dict[str, sqlite3.Connection] = {}
_LOCK = threading.Lock()


def _template(version: str) -> sqlite3.Connection:
    with _LOCK:
        conn = _TEMPLATES.get(version)
        if conn is None:
            if version != WORLD_VERSION:
                raise ValueError(
                    f"unknown world version {version!r}; this build has {WORLD_VERSION!r}"
                )
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            conn.executescript(DDL)
            load(conn, world_data())
            conn.execute("INSERT INTO meta VALUES ('world_version', ?)", (version,))
            conn.commit()
            _TEMPLATES[version] = conn
        return conn


_PATCHED: collections.OrderedDict[tuple[str, str, str], sqlite3.Connection] = (
    collections.OrderedDict()
)
_PATCHED_MAX = 256  # distinct (version, now, patch) templates kept; a suite has ~50


# Patch objects seen lately: id -> (the patch, a copy of it or None, its digest, its size).
_DIGESTS: collections.OrderedDict[int, tuple[Any, Any, str, int]] = collections.OrderedDict()
_DIGESTS_BYTES = 8 << 20  # at most this much patch data held (twice over with the copies)


def patch_digest(seed_patch: Any) -> str:
    """A digest naming a patch's content: equal digests mean equal patches.

    Every reset with a patch looks its template up by this, so it must cost little next to the
    reset itself. A patch is written with `marshal` (C, no key sorting; many times faster than
    canonical JSON) and remembered; when the same object comes again (a task's patch, reset
    again and again) a copy of it is taken, and from then on the object is recognised by
    identity and checked against that copy with one C-level `==` (a patch changed in place gets
    a new digest). Two equal patches written in a different key order get different digests,
    which only costs a second template; two different patches never share one (`marshal`
    output decodes back to its input). What `marshal` cannot write (a datetime, say) falls back
    to canonical JSON, in its own key space.
    """
    key = id(seed_patch)
    with _LOCK:
        seen = _DIGESTS.get(key)
        known = seen is not None and seen[0] is seed_patch and seen[1] is not None
        if known and seen[1] == seed_patch:  # pyright: ignore[reportOptionalSubscript]
            _DIGESTS.move_to_end(key)
            return seen[2]  # pyright: ignore[reportOptionalSubscript]
    try:
        data = marshal.dumps(seed_patch, 2)  # version 2: no back-references, so no refcounts
    except ValueError:
        text = json.dumps(seed_patch, sort_keys=True, default=str)
        return hashlib.sha256(b"j" + text.encode()).hexdigest()
    digest = hashlib.sha256(b"m" + data).hexdigest()
    again = seen is not None and seen[0] is seed_patch and seen[2] == digest
    copied = marshal.loads(data) if again else None  # a patch used twice: worth a copy
    with _LOCK:  # holding the patch keeps its id from being reused while it is remembered
        _DIGESTS[key] = (seed_patch, copied, digest, len(data))
        _DIGESTS.move_to_end(key)
        total = sum(entry[3] for entry in _DIGESTS.values())
        while total > _DIGESTS_BYTES and len(_DIGESTS) > 1:
            total -= _DIGESTS.popitem(last=False)[1][3]
    return digest


def _patched(version: str, now: str, seed_patch: Mapping[str, Any]) -> sqlite3.Connection:
    """The world `version` with `seed_patch` applied, built once per (version, now, patch) and
    kept (least recently used first out), so a reset costs one backup whatever the patch size.
    The seed does not enter: a patch's rows do not depend on it."""
    key = (version, now, patch_digest(seed_patch))
    with _LOCK:
        conn = _PATCHED.get(key)
        if conn is not None:
            _PATCHED.move_to_end(key)
            return conn
    base = _template(version)
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    with _LOCK:
        base.backup(conn)
    conn.execute("BEGIN")
    load(conn, seed_patch, stamp=parse_rfc3339(now).strftime("%Y-%m-%dT%H:%M:%S.000Z"))
    conn.execute("COMMIT")
    with _LOCK:
        _PATCHED[key] = conn
        while len(_PATCHED) > _PATCHED_MAX:
            _PATCHED.popitem(last=False)[1].close()
    return conn


def state_hash(dump: str) -> str:
    """The SHA-256 of a canonical dump (what "same seed, same state" compares)."""
    return hashlib.sha256(dump.encode()).hexdigest()


class Store:
    """A session's private database plus its seeded id counter and logical clock."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.conn.row_factory = sqlite3.Row
        self.lock = threading.RLock()  # a shared world may be used from several threads
        meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        self.seed = int(meta["seed"])
        self.counter = int(meta["counter"])
        self.now = parse_rfc3339(meta["now"])
        self.world_version = meta["world_version"]
        self.order_salt = ""
        """Set by a v3 task episode: the order of the candidates a not-found hint lists."""

    @classmethod
    def create(
        cls,
        *,
        seed: int = 0,
        now: str,
        seed_patch: Mapping[str, Any] | None = None,
        version: str = WORLD_VERSION,
    ) -> Store:
        """A fresh database: the world `version` plus `seed_patch`, with a frozen `now` (copied
        from a template built once per version, or per version, `now` and patch)."""
        template = _patched(version, now, seed_patch) if seed_patch else _template(version)
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        with _LOCK:
            template.backup(conn)
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("seed", str(seed)), ("counter", "0"), ("now", now)],
        )
        conn.execute("COMMIT")
        return cls(conn)

    # -- queries -------------------------------------------------------------------------------

    def all(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[sqlite3.Row]:
        """All rows of a query."""
        return self.conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Row | None:
        """The first row of a query, or `None`."""
        return self.conn.execute(sql, params).fetchone()

    def run(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        """Execute a write; returns the number of rows changed."""
        return self.conn.execute(sql, params).rowcount

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes of one tool call commit together or not at all."""
        self.conn.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            self.counter = int(self.one("SELECT value FROM meta WHERE key = 'counter'")["value"])  # type: ignore[index]
            raise
        else:
            self.conn.execute("COMMIT")

    # -- determinism ---------------------------------------------------------------------------

    def _next(self) -> int:
        self.counter += 1
        self.run("UPDATE meta SET value = ? WHERE key = 'counter'", (str(self.counter),))
        return self.counter

    def _digest(self, kind: str, n: int) -> str:
        return hashlib.sha256(f"{self.seed}:{kind}:{n}".encode()).hexdigest()

    def new_event_id(self) -> str:
        """A fresh event id (base32hex, 26 characters) from the seeded counter."""
        return self._digest("event", self._next())[:26]

    def new_calendar_id(self) -> str:
        """A fresh secondary-calendar id from the seeded counter."""
        return f"c_{self._digest('calendar', self._next())[:24]}@group.calendar.google.com"

    def tick(self) -> str:
        """A write timestamp: the frozen now plus one millisecond per write so far."""
        moment = self.now + timedelta(milliseconds=self._next())
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"

    def dump(self) -> str:
        """The whole database as canonical JSON (sorted tables, rows and keys)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for table, key in TABLES.items():
            rows = self.all(f"SELECT * FROM {table} ORDER BY {', '.join(key)}")
            out[table] = [dict(r) for r in rows]
        return json.dumps(out, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def close(self) -> None:
        """Release the database."""
        self.conn.close()


class SharedWorlds:
    """A process-wide, reference-counted registry of shared stores."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worlds: dict[str, tuple[Store, int]] = {}

    def acquire(self, key: str, create: Callable[[], Store]) -> Store:
        """The store registered under `key`, created by `create()` on first use."""
        with self._lock:
            found = self._worlds.get(key)
            store = found[0] if found else create()
            self._worlds[key] = (store, (found[1] if found else 0) + 1)
            return store

    def release(self, key: str) -> None:
        """Detach one session; the last one closes the store."""
        with self._lock:
            found = self._worlds.get(key)
            if found is None:
                return
            store, count = found
            if count <= 1:
                del self._worlds[key]
                store.close()
            else:
                self._worlds[key] = (store, count - 1)

    def __contains__(self, key: object) -> bool:
        return key in self._worlds


SHARED_WORLDS = SharedWorlds()
