"""The world as graders see it: normalised rows, and the diff between two snapshots.

`snapshot(store)` reads every table an agent can change into plain rows keyed by primary key,
dropping bookkeeping that changes on every write without meaning anything (etags, `updated`,
`created`, `sequence`, the id counter) and decoding JSON columns (attendees become a sorted list
of emails, and `guests` the sorted `[email, responseStatus, optional, displayName]` of each;
reminders stored as none read as `{"useDefault": true}`, as `events_get` shows them).
`diff(before, after)` lists inserted, updated and deleted rows with the fields that changed, so
"no writes outside the allowed set" is a question about that list.

`ChangeLog` makes snapshots after a write cheap: temporary SQLite triggers record the key of every
row a statement touches (rolled back with a failed call's transaction, invisible to `Store.dump`),
and `ChangeLog.refresh(snapshot)` re-reads only those rows.

Example:
    >>> from calendar_gym.world.store import Store
    >>> store = Store.create(now="2026-03-04T09:00:00-05:00")
    >>> before = snapshot(store)
    >>> _ = store.run("UPDATE calendars SET summary = 'Growth' WHERE summary = 'Marketing'")
    >>> [(c.table, c.op, c.fields) for c in diff(before, snapshot(store))]
    [('calendars', 'update', ['summary'])]
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from calendar_gym.world.store import Store

__all__ = ["KEYS", "Change", "ChangeLog", "Row", "Snapshot", "diff", "snapshot"]

Row = dict[str, Any]
Snapshot = dict[str, dict[tuple[str, ...], Row]]

KEYS: dict[str, tuple[str, ...]] = {
    "events": ("calendar_id", "id"),
    "calendars": ("id",),
    "acl": ("calendar_id", "rule_id"),
    "calendar_list": ("user_email", "calendar_id"),
    "settings": ("user_email", "id"),
}
"""The tables graders look at, with their primary keys."""

_DROP = {"etag", "updated", "created", "sequence", "ical_uid"}
_JSON = {
    "recurrence", "reminders", "extended", "guest_options", "default_reminders", "type_properties",
}  # fmt: skip


def _row(table: str, raw: dict[str, Any]) -> Row:
    row: Row = {}
    for key, value in raw.items():
        if key in _DROP:
            continue
        if key in _JSON and isinstance(value, str):
            value = json.loads(value)
        if key == "reminders" and value in (None, {}, {"useDefault": True, "overrides": []}):
            value = {"useDefault": True}  # what events_get shows for a row stored with none
        elif key == "attendees":
            guests = [a for a in json.loads(value or "[]") if isinstance(a, dict)]
            value = sorted({str(a["email"]).lower() for a in guests})
            row["guests"] = sorted(
                [str(a["email"]).lower(), a.get("responseStatus") or "needsAction",
                 bool(a.get("optional")), a.get("displayName") or ""]
                for a in guests
            )  # fmt: skip
        elif key == "end_":
            key = "end"
        row[key] = value
    return row


_CACHE: dict[tuple[Any, ...], Row] = {}
_CACHE_LIMIT = 200_000


def _cached_row(table: str, names: tuple[str, ...], values: tuple[Any, ...]) -> Row:
    """`_row`, memoised on the raw values: most rows never change within a suite run, and
    decoding their JSON columns again on every snapshot would dominate grading time."""
    key = (table, *values)
    found = _CACHE.get(key)
    if found is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        found = _CACHE[key] = _row(table, dict(zip(names, values, strict=True)))
    return found


def snapshot(store: Store) -> Snapshot:
    """Every gradable row of `store`, normalised (see the module docstring).

    Rows are shared between snapshots (memoised): treat them as read-only.
    """
    out: Snapshot = {}
    for table, key in KEYS.items():
        cursor = store.conn.execute(f"SELECT * FROM {table}")
        names = tuple(d[0] for d in cursor.description)
        index = [names.index(k) for k in key]
        rows = {}
        for raw in cursor.fetchall():
            values = tuple(raw)
            rows[tuple(str(values[i]) for i in index)] = _cached_row(table, names, values)
        out[table] = rows
    return out


class ChangeLog:
    """Records which gradable rows of a store change, so a snapshot can be brought up to date by
    re-reading just those (see the module docstring). One per store; installs temp triggers."""

    def __init__(self, store: Store) -> None:
        self.store = store
        statements = ["CREATE TEMP TABLE IF NOT EXISTS grading_dirty (tbl TEXT, k1 TEXT, k2 TEXT)"]
        for table, key in KEYS.items():
            for event, rows in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")),
                                ("DELETE", ("OLD",))):  # fmt: skip
                inserts = " ".join(
                    f"INSERT INTO grading_dirty VALUES ('{table}', {r}.{key[0]}, "
                    f"{f'{r}.{key[1]}' if len(key) > 1 else 'NULL'});"
                    for r in rows
                )
                statements.append(
                    f"CREATE TEMP TRIGGER IF NOT EXISTS grading_{table}_{event.lower()} "
                    f"AFTER {event} ON main.{table} BEGIN {inserts} END"
                )
        statements.append("DELETE FROM grading_dirty")
        # one script in one transaction (the store is in autocommit mode between calls)
        store.conn.executescript("BEGIN;\n" + ";\n".join(statements) + ";\nCOMMIT;")

    def refresh(self, before: Snapshot) -> Snapshot:
        """`before` updated with every row changed since the last refresh (a new snapshot;
        `before` is not modified)."""
        conn = self.store.conn
        dirty = conn.execute("SELECT DISTINCT tbl, k1, k2 FROM grading_dirty").fetchall()
        if not dirty:
            return before
        conn.execute("DELETE FROM grading_dirty")
        after = dict(before)
        for table in {d[0] for d in dirty}:
            after[table] = dict(before.get(table, {}))
        for table, k1, k2 in dirty:
            key = KEYS[table]
            values = (k1,) if len(key) == 1 else (k1, k2)
            where = " AND ".join(f"{k} = ?" for k in key)
            cursor = conn.execute(f"SELECT * FROM {table} WHERE {where}", values)
            raw = cursor.fetchone()
            row_key = tuple(str(v) for v in values)
            if raw is None:
                after[table].pop(row_key, None)
            else:
                names = tuple(d[0] for d in cursor.description)
                after[table][row_key] = _cached_row(table, names, tuple(raw))
        return after


@dataclass(frozen=True, slots=True)
class Change:
    """One row that differs between two snapshots."""

    table: str
    key: tuple[str, ...]
    op: str  # insert | update | delete
    before: Row | None = None
    after: Row | None = None
    fields: list[str] = field(default_factory=list[str])

    def summary(self) -> dict[str, Any]:
        """A compact, JSON-able description (for grade reports)."""
        row = self.after or self.before or {}
        label = row.get("summary") or row.get("role") or row.get("value")
        out: dict[str, Any] = {"table": self.table, "key": list(self.key), "op": self.op}
        if label is not None:
            out["label"] = label
        if self.fields:
            out["fields"] = self.fields
        return out


def diff(before: Snapshot, after: Snapshot) -> list[Change]:
    """Rows inserted, updated (with the fields that differ) or deleted, table by table."""
    changes: list[Change] = []
    for table in KEYS:
        old, new = before.get(table, {}), after.get(table, {})
        for key in sorted(old.keys() | new.keys()):
            a, b = old.get(key), new.get(key)
            if a is b or a == b:  # memoised rows: unchanged rows are the same object
                continue
            if a is None:
                changes.append(Change(table, key, "insert", None, b))
            elif b is None:
                changes.append(Change(table, key, "delete", a, None))
            else:
                fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
                changes.append(Change(table, key, "update", a, b, fields))
    return changes
