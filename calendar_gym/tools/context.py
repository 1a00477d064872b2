"""`CalendarContext`: what every tool mixin may use (the session's store, user and helpers).

`CalendarEnv.reset` fills these attributes; the tool mixins (`tools_*.py`) only read them, so each
mixin stays about one resource.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from calendar_gym.events.invites import owner_of_primary, refuse_write
from calendar_gym.events.rules import LATEST, rule_applies
from calendar_gym.world.acl import Access, require
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import make_etag
from calendar_gym.world.ids import listing_key
from calendar_gym.world.store import Store
from calendar_gym.world.timeutil import parse_rfc3339

__all__ = ["CalendarContext"]

_T = TypeVar("_T")

PAGE_BUDGET = 256 * 1024
"""Bytes (estimated before rendering) one list page may carry; see `CalendarContext.page`."""


class CalendarContext:
    """Session attributes and shared helpers of the Calendar tools.

    Attributes (set by `CalendarEnv.reset`):
        store: the session's private database.
        user: the acting user's email.
        scopes: the granted OAuth scopes (full URLs).
        suite_version: the task suite whose rules apply (reset option `suite`; version-gated
            rules are in `calendar_gym.events.rules.VERSION_RULES`).
        order_salt: from suite v3, a task episode's `"{seed}/{task}"`: lists whose order
            Google leaves unspecified (the calendar list, `events_list` without `orderBy`,
            directory search) come in an order fixed by it, so no list position holds the right
            answer across tasks and seeds. Empty: the old sorted orders.
    """

    store: Store
    user: str
    scopes: tuple[str, ...]
    suite_version: str = LATEST
    order_salt: str = ""

    def listing_key(self, ident: str) -> str:
        """The sort key of item `ident` in an unspecified-order list (see `order_salt`)."""
        return listing_key(self.order_salt, ident)

    def invitee(self, calendar_id: str) -> str | None:
        """The owner of `calendar_id` when it is a primary calendar that shows invitations'
        copies (`calendar_gym.events.invites`, from the suite the rule names), else None."""
        if not rule_applies("invitee_copies", self.suite_version):
            return None
        return owner_of_primary(self.store, calendar_id)

    def refuse_copy(self, calendar_id: str, event_id: str) -> None:
        """Refuse a write through an invitation's copy (`forbiddenForNonOrganizer`)."""
        if rule_applies("invitee_copies", self.suite_version):
            refuse_write(self.store, calendar_id, event_id)

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
        items: list[_T],
        max_results: int | None,
        page_token: str | None,
        default: int = 250,
        cost: Callable[[_T], int] | None = None,
        budget: int = PAGE_BUDGET,
    ) -> tuple[list[_T], str | None]:
        """One page of `items` and the token of the next page (if any).

        With `cost` (an item's size estimate in bytes) a page also ends before the items it
        holds pass `budget` (always at least one item): as Google's own pages, it may then hold
        fewer than `max_results` items while `nextPageToken` says more exist. This bounds what
        one call costs to render and send, whatever the page size asked for."""
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
        if cost is not None:
            spent = 0
            for n, item in enumerate(items[offset : offset + size]):
                spent += cost(item)
                if spent > budget and n > 0:
                    size = n
                    break
        chunk = items[offset : offset + size]
        more = offset + size < len(items)
        token = base64.urlsafe_b64encode(f"o:{offset + size}".encode()).decode() if more else None
        return chunk, token

    @staticmethod
    def clean(resource: dict[str, Any]) -> dict[str, Any]:
        """Drop `None` values from a resource."""
        return {k: v for k, v in resource.items() if v is not None}
