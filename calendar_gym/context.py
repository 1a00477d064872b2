"""`CalendarContext`: what every tool mixin may use (the session's store, user and helpers).

`CalendarEnv.reset` fills these attributes; the tool mixins (`tools_*.py`) only read them, so each
mixin stays about one resource.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any, TypeVar

from calendar_gym.acl import Access, require
from calendar_gym.errors import ApiError
from calendar_gym.eventdata import make_etag
from calendar_gym.store import Store
from calendar_gym.tasks.loader import LATEST
from calendar_gym.timeutil import parse_rfc3339

__all__ = ["CalendarContext"]

_T = TypeVar("_T")


class CalendarContext:
    """Session attributes and shared helpers of the Calendar tools.

    Attributes (set by `CalendarEnv.reset`):
        store: the session's private database.
        user: the acting user's email.
        scopes: the granted OAuth scopes (full URLs).
        suite_version: the task suite whose rules apply (reset option `suite`; version-gated
            rules are in `calendar_gym.event_rules.VERSION_RULES`).
    """

    store: Store
    user: str
    scopes: tuple[str, ...]
    suite_version: str = LATEST

    def access(
        self,
        calendar_id: str,
        needed: str,
        action: str,
        field: str = "calendarId",
        *,
        strict: bool = False,
    ) -> Access:
        """The calendar if the acting user has role `needed` (see `acl.require`)."""
        return require(
            self.store, self.user, calendar_id, needed, action=action, field=field, strict=strict
        )

    def user_tz(self, user: str | None = None) -> str:
        """A user's time zone setting (default: the acting user)."""
        row = self.store.one(
            "SELECT value FROM settings WHERE user_email = ? AND id = 'timezone'",
            (user or self.user,),
        )
        return str(row["value"]) if row else "UTC"

    def names(self) -> dict[str, str]:
        """Display names by email or calendar id (for organizers, creators and attendees).

        Cached until the database changes.
        """
        key = (id(self.store), self.store.conn.total_changes)
        cached = self.__dict__.get("_names_cache")
        if cached is not None and cached[0] == key:
            return cached[1]
        out = {r["email"]: r["name"] for r in self.store.all("SELECT email, name FROM users")}
        for r in self.store.all("SELECT id, summary FROM calendars WHERE is_primary = 0"):
            out[r["id"]] = r["summary"]
        self.__dict__["_names_cache"] = (key, out)
        return out

    @staticmethod
    def instant(value: str | None) -> datetime | None:
        """An already-validated RFC 3339 argument as an aware datetime."""
        return parse_rfc3339(value) if value else None

    def collection(
        self, kind: str, items: list[dict[str, Any]], token: str | None, **extra: Any
    ) -> dict[str, Any]:
        """A v3 list response: `kind`, `etag` (of this page's content), `extra` fields, `items`,
        and `nextPageToken`, or on the last page `nextSyncToken` (opaque; `syncToken` itself is
        not supported, see docs "Fidelity")."""
        etag = make_etag(kind, json.dumps(items, sort_keys=True, default=str))
        out: dict[str, Any] = {"kind": kind, "etag": etag, **extra, "items": items}
        if token:
            out["nextPageToken"] = token
        else:
            out["nextSyncToken"] = base64.urlsafe_b64encode(f"s:{etag}".encode()).decode()
        return out

    @staticmethod
    def page(
        items: list[_T], max_results: int | None, page_token: str | None, default: int = 250
    ) -> tuple[list[_T], str | None]:
        """One page of `items` and the token of the next page (if any)."""
        offset = 0
        if page_token:
            try:
                offset = int(
                    base64.urlsafe_b64decode(page_token.encode()).decode().removeprefix("o:")
                )
            except (ValueError, UnicodeDecodeError):
                raise ApiError(
                    "INVALID_VALUE",
                    f"pageToken {page_token!r} is not a token this tool returned.",
                    field="pageToken",
                    expected="the nextPageToken of the previous response",
                    got=page_token,
                    hint="Repeat the call without pageToken to start from the first page.",
                ) from None
        size = int(max_results or default)
        chunk = items[offset : offset + size]
        more = offset + size < len(items)
        token = base64.urlsafe_b64encode(f"o:{offset + size}".encode()).decode() if more else None
        return chunk, token

    @staticmethod
    def clean(resource: dict[str, Any]) -> dict[str, Any]:
        """Drop `None` values from a resource."""
        return {k: v for k, v in resource.items() if v is not None}
