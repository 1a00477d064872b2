"""`freebusy_query`, `colors_get`, `settings_list|get` and `directory_search`.

Free/busy needs only the freeBusyReader role; a calendar you cannot see at all comes back with a
per-calendar `NOT_FOUND` error (the rest of the query still answers), as Google does. A group
email in `items` expands to its members' primary calendars. The settings include the episode's
frozen `now`, so an agent can always learn what "today" is.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from calendar_gym.events.invites import declined
from calendar_gym.events.query import Window, rows_in_window
from calendar_gym.tools.context import CalendarContext
from calendar_gym.tools.models import FreeBusyItem, MaxResults, PageToken, TimeZoneName
from calendar_gym.tools.suggest import suggest_field
from calendar_gym.world.colors import CALENDAR_COLORS, EVENT_COLORS
from calendar_gym.world.directory import search
from calendar_gym.world.errors import ApiError, ErrorMode
from calendar_gym.world.eventdata import event_bounds, make_etag
from calendar_gym.world.timeutil import format_in_zone
from mcpgym import tool

__all__ = ["MiscTools"]

Bound = Annotated[
    str,
    Field(
        description="RFC 3339 date-time with an offset, e.g. 2026-03-05T09:00:00-05:00.",
        json_schema_extra={"x-format": "rfc3339"},
    ),
]


def _merge(spans: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    out: list[tuple[datetime, datetime]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


class MiscTools(CalendarContext):
    """Tool mixin: free/busy, colors, settings and the directory."""

    error_mode: ErrorMode
    now: datetime

    def _busy(self, raw_id: str, window: Window, tz: str | None) -> dict[str, Any]:
        try:
            access = self.access(raw_id, "freeBusyReader", "see its free/busy times", field="items")
        except ApiError as err:
            detail: dict[str, Any] = {"domain": "global", "reason": err.info.google_reason}
            if self.error_mode == "structured":
                detail.update(err.item())
            return {"busy": [], "errors": [detail]}
        invitee = self.invitee(access.id)
        rows = rows_in_window(
            self.store, access.id, access.time_zone, window, single_events=True,
            show_deleted=False, invitee=invitee,
        )  # fmt: skip
        spans = []
        for row in rows:
            if row["transparency"] == "transparent":
                continue
            if invitee is not None and row["calendar_id"] != access.id and declined(row, invitee):
                continue  # a declined invitation is listed, not busy
            start, end = event_bounds(row, access.time_zone)
            assert window.lo is not None and window.hi is not None
            spans.append((max(start, window.lo), min(end, window.hi)))
        return {
            "busy": [
                {"start": format_in_zone(s, tz), "end": format_in_zone(e, tz)}
                for s, e in _merge(spans)
            ]
        }

    @tool(annotations={"readOnlyHint": True})
    def freebusy_query(
        self,
        timeMin: Bound,
        timeMax: Bound,
        items: Annotated[
            list[FreeBusyItem],
            Field(
                min_length=1,
                description='Calendars to query, e.g. [{"id": "bob@acme.test"}]; a group email '
                "expands to its members.",
            ),
        ],
        timeZone: TimeZoneName = None,
        groupExpansionMax: Annotated[int | None, Field(ge=1, le=100)] = None,
        calendarExpansionMax: Annotated[int | None, Field(ge=1, le=50)] = None,
    ) -> dict[str, Any]:
        """Busy intervals of calendars between timeMin and timeMax (needs freeBusyReader each).

        Times come back in timeZone (default UTC); events marked transparent do not block.
        """
        lo, hi = self.instant(timeMin), self.instant(timeMax)
        assert lo is not None and hi is not None
        if hi <= lo:
            raise ApiError(
                "INVALID_VALUE",
                f"timeMax ({timeMax}) must be after timeMin ({timeMin}).",
                field="timeMax",
                expected=f"a time after {timeMin}",
                got=timeMax,
                hint="Swap them, or widen the window.",
                google_message="The specified time range is empty.",
                google_reason="timeRangeEmpty",
            )
        window = Window(lo, hi)
        calendars: dict[str, Any] = {}
        groups: dict[str, Any] = {}
        for item in items[: calendarExpansionMax or 50]:
            gid = item.id.strip().lower()
            group = self.store.one("SELECT email FROM groups WHERE email = ?", (gid,))
            if group is not None:
                members = [
                    r[0]
                    for r in self.store.all(
                        "SELECT member_email FROM group_members WHERE group_email = ? "
                        "ORDER BY member_email",
                        (gid,),
                    )
                ][: groupExpansionMax or 100]
                groups[item.id] = {"calendars": members}
                for member in members:
                    calendars.setdefault(member, self._busy(member, window, timeZone))
                continue
            calendars[item.id] = self._busy(item.id, window, timeZone)
        out: dict[str, Any] = {
            "kind": "calendar#freeBusy",
            "timeMin": format_in_zone(lo, timeZone),
            "timeMax": format_in_zone(hi, timeZone),
            "calendars": calendars,
        }
        if groups:
            out["groups"] = groups
        return out

    @tool(annotations={"readOnlyHint": True})
    def colors_get(self) -> dict[str, Any]:
        """The color palette: ids usable as a calendar list entry's or an event's colorId."""
        return {
            "kind": "calendar#colors",
            "updated": "2012-02-14T00:00:00.000Z",
            "calendar": CALENDAR_COLORS,
            "event": EVENT_COLORS,
        }

    def _settings(self) -> dict[str, str]:
        rows = self.store.all(
            "SELECT id, value FROM settings WHERE user_email = ? ORDER BY id", (self.user,)
        )
        values = {r["id"]: r["value"] for r in rows}
        values["now"] = format_in_zone(self.now, values.get("timezone", "UTC"))
        return dict(sorted(values.items()))

    def _setting(self, key: str, value: str) -> dict[str, Any]:
        return {
            "kind": "calendar#setting",
            "etag": make_etag(key, value),
            "id": key,
            "value": value,
        }

    @tool(annotations={"readOnlyHint": True})
    def settings_list(
        self, maxResults: MaxResults = None, pageToken: PageToken = None
    ) -> dict[str, Any]:
        """Your calendar settings: timezone, locale, weekStart, ... and `now` (the current time)."""
        items = [self._setting(k, v) for k, v in self._settings().items()]
        page, token = self.page(items, maxResults, pageToken)
        return self.collection("calendar#settings", page, token)

    @tool(annotations={"readOnlyHint": True})
    def settings_get(
        self, setting: Annotated[str, Field(description="A setting id, e.g. 'timezone' or 'now'.")]
    ) -> dict[str, Any]:
        """One of your calendar settings."""
        values = self._settings()
        if setting not in values:
            near = suggest_field(setting, values)
            raise ApiError(
                "NOT_FOUND",
                f"There is no setting {setting!r}.",
                field="setting",
                expected=list(values),
                got=setting,
                hint=f"Did you mean {near!r}?" if near else "Call settings_list to see them.",
                suggestion=near,
            )
        return self._setting(setting, values[setting])

    @tool(annotations={"readOnlyHint": True})
    def directory_search(
        self,
        query: Annotated[
            str, Field(min_length=1, description="Words of a name, email, title or domain.")
        ],
    ) -> dict[str, Any]:
        """Find people and groups (their emails, time zones and primary calendar ids)."""
        found = search(self.store, query)
        if self.order_salt:  # relevance order is unspecified: seeded per task episode (v3)
            for key in ("users", "groups"):
                found[key].sort(key=lambda e: self.listing_key(e["email"]))
        return found
