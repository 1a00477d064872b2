"""The world as graders see it: normalised rows, and the diff between two snapshots.

`snapshot(store)` reads every table an agent can change into plain rows keyed by primary key,
dropping bookkeeping that changes on every write without meaning anything (etags, `updated`,
`created`, `sequence`, the id counter) and decoding JSON columns (attendees become a sorted list
of emails). `diff(before, after)` lists inserted, updated and deleted rows with the fields that
changed, so "no writes outside the allowed set" is a question about that list.

Example:
    >>> from calendar_gym.store import Store
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

from calendar_gym.store import Store

__all__ = ["KEYS", "Change", "Row", "Snapshot", "diff", "snapshot"]

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
_JSON = {"recurrence", "reminders", "extended", "guest_options", "default_reminders"}


def _row(table: str, raw: dict[str, Any]) -> Row:
    row: Row = {}
    for key, value in raw.items():
        if key in _DROP:
            continue
        if key in _JSON and isinstance(value, str):
            value = json.loads(value)
        elif key == "attendees":
            value = sorted({str(a["email"]).lower() for a in json.loads(value or "[]")})
        elif key == "end_":
            key = "end"
        row[key] = value
    return row


def snapshot(store: Store) -> Snapshot:
    """Every gradable row of `store`, normalised (see the module docstring)."""
    out: Snapshot = {}
    for table, key in KEYS.items():
        rows = store.all(f"SELECT * FROM {table}")
        out[table] = {tuple(str(r[k]) for k in key): _row(table, dict(r)) for r in rows}
    return out


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
            if a == b:
                continue
            if a is None:
                changes.append(Change(table, key, "insert", None, b))
            elif b is None:
                changes.append(Change(table, key, "delete", a, None))
            else:
                fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
                changes.append(Change(table, key, "update", a, b, fields))
    return changes
