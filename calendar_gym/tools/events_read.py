"""The reading `events_*` tools (Calendar API v3 `Events`): list, get, instances.

Reading needs the reader role; private events come back as busy-only stubs unless your role
shows their details (writer or owner). `events_list` filters by window, text, iCalUID,
`updatedMin` and `eventTypes`.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import Field

from calendar_gym.events.query import Window, expand, find_event, rows_in_window
from calendar_gym.events.rules import rule_applies
from calendar_gym.events.write import TEXT_COLUMNS
from calendar_gym.tools.context import CalendarContext
from calendar_gym.tools.models import (
    CalendarId,
    EventId,
    EventTypeName,
    MaxResults,
    PageToken,
    TimeBound,
    TimeZoneName,
)
from calendar_gym.world.acl import Access
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import PRIVATE_VISIBILITIES, event_bounds, render_event
from calendar_gym.world.timeutil import format_utc_z
from mcpgym import tool

__all__ = ["EventReadTools"]


def row_cost(row: dict[str, Any]) -> int:
    """A rendered event's size in bytes, estimated from its stored row (its text columns and
    a fixed ~700 bytes for ids, times, links and the rest)."""
    return 700 + sum(len(row.get(c) or "") for c in TEXT_COLUMNS)


class EventReadTools(CalendarContext):
    """Tool mixin: reading the events of a calendar."""

    def _sees(self, row: dict[str, Any], access: Access) -> bool:
        """Whether the caller sees the event's details: not private, a role that sees private
        events, or (from suite v3, as `visibility: private` says: "only event attendees may
        view event details") the caller is one of its attendees."""
        if row["visibility"] not in PRIVATE_VISIBILITIES or access.sees_private:
            return True
        if not rule_applies("attendee_sees_private", self.suite_version):
            return False
        guests = json.loads(row["attendees"] or "[]")
        return any(str(g.get("email", "")).lower() == self.user.lower() for g in guests)

    def _render(self, row: dict[str, Any], access: Access, tz: str | None = None) -> dict[str, Any]:
        return render_event(
            row,
            cal_tz=access.time_zone,
            user=self.user,
            names=self.names(),
            tz_override=tz,
            busy_only=not self._sees(row, access),
        )

    def _window(self, time_min: str | None, time_max: str | None) -> Window:
        lo, hi = self.instant(time_min), self.instant(time_max)
        if lo is not None and hi is not None and hi <= lo:
            raise ApiError(
                "INVALID_VALUE",
                f"timeMax ({time_max}) must be after timeMin ({time_min}).",
                field="timeMax",
                expected=f"a time after {time_min}",
                got=time_max,
                hint="Swap them, or widen the window.",
                google_message="The specified time range is empty.",
                google_reason="timeRangeEmpty",
            )
        return Window(lo, hi)

    def _listing(
        self, access: Access, items: list[dict[str, Any]], tz: str | None, token: str | None
    ) -> dict[str, Any]:
        entry = self.store.one(
            "SELECT summary_override FROM calendar_list WHERE user_email = ? AND calendar_id = ?",
            (self.user, access.id),
        )
        stamps = [str(i["updated"]) for i in items if i.get("updated")]
        return self.collection(
            "calendar#events",
            items,
            token,
            summary=(entry and entry["summary_override"]) or access.calendar["summary"],
            description=access.calendar["description"],
            updated=max(stamps) if stamps else format_utc_z(self.store.now),
            timeZone=tz or access.time_zone,
            accessRole=access.role,
            defaultReminders=[],
        )

    @tool(annotations={"readOnlyHint": True})
    def events_list(
        self,
        calendarId: CalendarId,
        timeMin: TimeBound = None,
        timeMax: TimeBound = None,
        q: Annotated[str | None, Field(description="Free-text search (all words).")] = None,
        singleEvents: Annotated[
            bool, Field(description="Expand recurring events into instances.")
        ] = False,
        orderBy: Annotated[
            Literal["startTime", "updated"] | None,
            Field(description="startTime needs singleEvents=true."),
        ] = None,
        maxResults: MaxResults = None,
        pageToken: PageToken = None,
        showDeleted: bool = False,
        timeZone: TimeZoneName = None,
        iCalUID: str | None = None,
        updatedMin: TimeBound = None,
        eventTypes: Annotated[
            list[EventTypeName] | None,
            Field(description="Only events of these types (default: every type)."),
        ] = None,
    ) -> dict[str, Any]:
        """List events of a calendar (needs reader; private events show as busy to non-owners).

        Events overlapping [timeMin, timeMax) are returned; with singleEvents=true recurring
        events are expanded into instances with ids {eventId}_{YYYYMMDDTHHMMSSZ}.
        """
        if orderBy == "startTime" and not singleEvents:
            raise ApiError(
                "INVALID_VALUE",
                "orderBy='startTime' is only allowed with singleEvents=true.",
                field="orderBy",
                expected="singleEvents=true, or orderBy='updated'",
                got=orderBy,
                hint="Add singleEvents=true (expands recurring events), or drop orderBy.",
                example={"singleEvents": True, "orderBy": "startTime"},
            )
        access = self.access(calendarId, "reader", "list its events")
        window = self._window(timeMin, timeMax)
        rows = rows_in_window(
            self.store,
            access.id,
            access.time_zone,
            window,
            single_events=singleEvents,
            show_deleted=showDeleted,
            invitee=self.invitee(access.id),
        )
        if q:
            words = q.lower().split()
            rows = [r for r in rows if self._sees(r, access)
                    and all(w in _text(r) for w in words)]  # fmt: skip
        if iCalUID:
            rows = [r for r in rows if r["ical_uid"] == iCalUID]
        if eventTypes is not None:
            rows = [r for r in rows if r["event_type"] in eventTypes]
        since = self.instant(updatedMin)
        if since is not None:
            rows = [r for r in rows if r["updated"] >= since.strftime("%Y-%m-%dT%H:%M:%S")]
        if orderBy == "updated":
            rows.sort(key=lambda r: (r["updated"], r["id"]))
        elif orderBy is None and self.order_salt:
            rows.sort(key=lambda r: self.listing_key(r["id"]))  # unspecified: seeded (v3)
        else:
            rows.sort(key=lambda r: (event_bounds(r, access.time_zone)[0], r["id"]))
        page, token = self.page(rows, maxResults, pageToken, cost=row_cost)
        return self._listing(
            access, [self._render(r, access, timeZone) for r in page], timeZone, token
        )

    @tool(annotations={"readOnlyHint": True})
    def events_get(
        self, calendarId: CalendarId, eventId: EventId, timeZone: TimeZoneName = None
    ) -> dict[str, Any]:
        """Get one event or one instance of a recurring event (needs reader)."""
        access = self.access(calendarId, "reader", "read its events")
        row = find_event(self.store, self.user, access.id, eventId, access.time_zone,
                         invitee=self.invitee(access.id))  # fmt: skip
        return self._render(row, access, timeZone)

    @tool(annotations={"readOnlyHint": True})
    def events_instances(
        self,
        calendarId: CalendarId,
        eventId: Annotated[str, Field(description="The recurring event's (master) id.")],
        timeMin: TimeBound = None,
        timeMax: TimeBound = None,
        maxResults: MaxResults = None,
        pageToken: PageToken = None,
        showDeleted: bool = False,
        timeZone: TimeZoneName = None,
        originalStart: TimeBound = None,
    ) -> dict[str, Any]:
        """List the instances of a recurring event (needs reader)."""
        access = self.access(calendarId, "reader", "read its events")
        master = find_event(self.store, self.user, access.id, eventId, access.time_zone,
                            invitee=self.invitee(access.id))  # fmt: skip
        if not master["recurrence"]:
            raise ApiError(
                "INVALID_VALUE",
                f"Event {eventId!r} is not a recurring event"
                + (" (it is one instance of one)." if master["recurring_event_id"] else "."),
                field="eventId",
                expected="the id of a recurring event's master",
                got=eventId,
                hint=f"Use eventId={master['recurring_event_id']!r}."
                if master["recurring_event_id"]
                else "Use events_get for a single event.",
            )
        rows = expand(self.store, master, access.time_zone, self._window(timeMin, timeMax),
                      showDeleted)  # fmt: skip
        if originalStart:
            wanted = self.instant(originalStart)
            rows = [r for r in rows if r["original_start"] == wanted.strftime("%Y-%m-%dT%H:%M:%SZ")]  # type: ignore[union-attr]
        rows.sort(key=lambda r: (r["original_start"], r["id"]))
        page, token = self.page(rows, maxResults, pageToken, cost=row_cost)
        return self._listing(
            access, [self._render(r, access, timeZone) for r in page], timeZone, token
        )


def _text(row: dict[str, Any]) -> str:
    parts = [
        row["summary"] or "",
        row["description"] or "",
        row["location"] or "",
        row["attendees"],
    ]
    return " ".join(parts).lower()
