"""The `calendars_*` tools: the calendars themselves (the calendar list is in
`tools_calendarlist`).

Changing a calendar's metadata, deleting or clearing it needs the owner role. `calendars_patch`
changes the fields it is given; `calendars_update` (v3's PUT) replaces the metadata: a
description or location it is not given is cleared, and an omitted time zone becomes the one
`calendars_insert` would give (the data owner's time zone setting).
"""

from __future__ import annotations

import sqlite3
from typing import Annotated, Any

from pydantic import Field

from calendar_gym.tools.calendar_list import CalendarListTools
from calendar_gym.tools.models import DESCRIPTION_MAX, TEXT_MAX, CalendarId, TimeZoneName
from calendar_gym.world.colors import CALENDAR_COLORS, calendar_color_for
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import make_etag
from mcpgym import tool

CALENDARS_MAX = 500
"""Calendars one world keeps (the seed's and the agent's): each holds at most
`calendar_gym.events.write.EVENTS_PER_CALENDAR` events, so a session's store is bounded."""

__all__ = ["CalendarTools"]


class CalendarTools(CalendarListTools):
    """Tool mixin: calendars (and, inherited, the calendar list)."""

    # -- calendars ----------------------------------------------------------------------------

    def _calendar(self, cal: sqlite3.Row) -> dict[str, Any]:
        return self.clean(
            {
                "kind": "calendar#calendar",
                "etag": cal["etag"],
                "id": cal["id"],
                "summary": cal["summary"],
                "description": cal["description"] or None,
                "location": cal["location"] or None,
                "timeZone": cal["time_zone"],
            }
        )

    @tool(annotations={"readOnlyHint": True})
    def calendars_get(self, calendarId: CalendarId) -> dict[str, Any]:
        """Get a calendar's metadata (any role)."""
        return self._calendar(self.access(calendarId, "freeBusyReader", "see it").calendar)

    @tool
    def calendars_insert(
        self,
        summary: Annotated[
            str, Field(min_length=1, max_length=TEXT_MAX, description="The new calendar's title.")
        ],
        description: Annotated[str, Field(max_length=DESCRIPTION_MAX)] | None = None,
        location: Annotated[str, Field(max_length=TEXT_MAX)] | None = None,
        timeZone: TimeZoneName = None,
    ) -> dict[str, Any]:
        """Create a secondary calendar that you own (it is added to your calendar list)."""
        if self.store.one("SELECT count(*) AS n FROM calendars")["n"] >= CALENDARS_MAX:
            raise ApiError(
                "QUOTA_EXCEEDED",
                f"This world already holds {CALENDARS_MAX} calendars, the most it keeps.",
                field="summary",
                expected=f"at most {CALENDARS_MAX} calendars",
                hint="Delete a calendar you created (calendars_delete) before creating another.",
                google_message="Calendar usage limits exceeded.",
            )
        cid = self.store.new_calendar_id()
        stamp = self.store.tick()
        self.store.run(
            "INSERT INTO calendars VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?)",
            (cid, summary, description or "", location or "", timeZone or self.user_tz(),
             self.user, make_etag(cid, stamp)),
        )  # fmt: skip
        self.store.run(
            "INSERT INTO acl VALUES (?, ?, 'user', ?, 'owner', ?)",
            (cid, f"user:{self.user}", self.user, make_etag(cid, self.user, stamp)),
        )
        color = calendar_color_for(cid)
        self.store.run(
            "INSERT INTO calendar_list (user_email, calendar_id, color_id, background_color, etag) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                self.user,
                cid,
                color,
                CALENDAR_COLORS[color]["background"],
                make_etag(self.user, cid),
            ),
        )
        row = self.store.one("SELECT * FROM calendars WHERE id = ?", (cid,))
        assert row is not None
        return self._calendar(row)

    def _set_calendar(self, cid: str, values: dict[str, str | None]) -> dict[str, Any]:
        """Write the given metadata columns (None: leave as is), bump the etag, return it."""
        for column, value in values.items():
            if value is not None:
                self.store.run(f"UPDATE calendars SET {column} = ? WHERE id = ?", (value, cid))
        self.store.run(
            "UPDATE calendars SET etag = ? WHERE id = ?", (make_etag(cid, self.store.tick()), cid)
        )
        row = self.store.one("SELECT * FROM calendars WHERE id = ?", (cid,))
        assert row is not None
        return self._calendar(row)

    @tool
    def calendars_patch(
        self,
        calendarId: CalendarId,
        summary: Annotated[str | None, Field(min_length=1)] = None,
        description: Annotated[str, Field(max_length=DESCRIPTION_MAX)] | None = None,
        location: Annotated[str, Field(max_length=TEXT_MAX)] | None = None,
        timeZone: TimeZoneName = None,
    ) -> dict[str, Any]:
        """Change a calendar's title, description, location or time zone (needs owner);
        omitted fields stay as they are."""
        access = self.access(calendarId, "owner", "change the calendar's settings")
        values = {"summary": summary, "description": description, "location": location,
                  "time_zone": timeZone}  # fmt: skip
        return self._set_calendar(access.id, values)

    @tool
    def calendars_update(
        self,
        calendarId: CalendarId,
        summary: Annotated[str, Field(min_length=1, description="The calendar's title.")],
        description: Annotated[str, Field(max_length=DESCRIPTION_MAX)] | None = None,
        location: Annotated[str, Field(max_length=TEXT_MAX)] | None = None,
        timeZone: TimeZoneName = None,
    ) -> dict[str, Any]:
        """Replace a calendar's metadata (needs owner): an omitted description or location is
        cleared, an omitted timeZone becomes the owner's time zone setting. To change one
        field only, use calendars_patch."""
        access = self.access(calendarId, "owner", "change the calendar's settings")
        zone = timeZone or self.user_tz(str(access.calendar["owner"]))
        values = {"summary": summary, "description": description or "",
                  "location": location or "", "time_zone": zone}  # fmt: skip
        return self._set_calendar(access.id, values)

    @tool
    def calendars_delete(self, calendarId: CalendarId) -> dict[str, Any]:
        """Delete a secondary calendar you own, with its events (needs owner)."""
        access = self.access(calendarId, "owner", "delete the calendar")
        if access.calendar["is_primary"]:
            raise ApiError(
                "FORBIDDEN_OPERATION",
                "A primary calendar cannot be deleted.",
                field="calendarId",
                expected="a secondary calendar",
                got=calendarId,
                hint="To remove all events of a primary calendar use calendars_clear.",
                google_message="Cannot delete primary calendar.",
            )
        self.store.run("UPDATE calendars SET deleted = 1 WHERE id = ?", (access.id,))
        self.store.tick()
        return {"calendarId": access.id, "deleted": True}

    @tool
    def calendars_clear(self, calendarId: CalendarId) -> dict[str, Any]:
        """Cancel every event of a primary calendar you own (needs owner)."""
        access = self.access(calendarId, "owner", "clear the calendar")
        if not access.calendar["is_primary"]:
            raise ApiError(
                "FORBIDDEN_OPERATION",
                "calendars_clear only works on a primary calendar.",
                field="calendarId",
                expected="a primary calendar (yours: 'primary')",
                got=calendarId,
                hint="Delete a secondary calendar with calendars_delete, or its events one by "
                "one with events_delete.",
            )
        stamp = self.store.tick()
        count = self.store.run(
            "UPDATE events SET status = 'cancelled', updated = ?, sequence = sequence + 1 "
            "WHERE calendar_id = ? AND status != 'cancelled'",
            (stamp, access.id),
        )
        return {"calendarId": access.id, "cancelledEvents": count}
