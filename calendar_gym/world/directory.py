"""The people directory behind `directory_search`: users and groups of both domains.

Matching is case-insensitive on every word of the query against names, emails, titles and
domains, so "alex" finds both Alexes and "alex globex" only one.

Example:
    >>> from calendar_gym.world.store import Store
    >>> found = search(Store.create(now="2026-03-04T14:00:00Z"), "alex")
    >>> [u["email"] for u in found["users"]]
    ['alex.kim@acme.test', 'alex.rivera@globex.test']
"""

from __future__ import annotations

from typing import Any

from calendar_gym.world.store import Store

__all__ = ["search"]


def search(store: Store, query: str, limit: int = 20) -> dict[str, Any]:
    """Users and groups matching every word of `query`."""
    words = [w for w in query.lower().split() if w]
    users = []
    for u in store.all("SELECT * FROM users ORDER BY email"):
        text = " ".join((u["name"], u["email"], u["title"], u["domain"])).lower()
        if all(w in text for w in words):
            users.append(
                {
                    "email": u["email"],
                    "name": u["name"],
                    "domain": u["domain"],
                    "title": u["title"],
                    "timeZone": u["time_zone"],
                    "primaryCalendarId": u["email"],
                }
            )
    groups = []
    for g in store.all("SELECT * FROM groups ORDER BY email"):
        text = " ".join((g["name"], g["email"], g["description"])).lower()
        if all(w in text for w in words):
            members = [
                r[0]
                for r in store.all(
                    "SELECT member_email FROM group_members WHERE group_email = ? "
                    "ORDER BY member_email",
                    (g["email"],),
                )
            ]
            groups.append(
                {
                    "email": g["email"],
                    "name": g["name"],
                    "description": g["description"],
                    "members": members,
                }
            )
    return {"users": users[:limit], "groups": groups[:limit]}
