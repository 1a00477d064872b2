"""The `calendarList_*` tools (each user's own list of calendars) and `calendars_*` tools (the
calendars themselves).

The calendar list is per user: entries carry the user's `accessRole` (computed from the ACL),
color, visibility and an optional `summaryOverride`. Changing a calendar's metadata, deleting or
clearing it needs the owner role.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Annotated, Any, Literal

from pydantic import Field

from calendar_gym.acl import RANK, effective_role, resolve_calendar_id
from calendar_gym.colors import CALENDAR_COLORS, calendar_color_for
from calendar_gym.context import CalendarContext
from calendar_gym.errors import ApiError
from calendar_gym.eventdata import make_etag
from calendar_gym.models import CalendarId, PageToken, ReminderOverride, TimeZoneName
from mcpgym import tool

__all__ = ["CalendarTools"]

CalendarColor = Literal[
    "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12",
    "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24",
] | None  # fmt: skip
HexColor = Annotated[str | None, Field(json_schema_extra={"x-format": "hex-color"})]
MinRole = (
    Literal["freeBusyReader", "reader", "writerWithoutPrivateAccess", "writer", "owner"] | None
)


class CalendarTools(CalendarContext):
    """Tool mixin: the calendar list and calendars."""

    def _entry(self, entry: sqlite3.Row, cal: sqlite3.Row, role: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "calendar#calendarListEntry",
            "etag": entry["etag"],
            "id": cal["id"],
            "summary": cal["summary"],
            "summaryOverride": entry["summary_override"],
            "description": cal["description"] or None,
            "location": cal["location"] or None,
            "timeZone": cal["time_zone"],
            "colorId": entry["color_id"],
            "backgroundColor": entry["background_color"],
            "foregroundColor": entry["foreground_color"],
            "hidden": True if entry["hidden"] else None,
            "selected": bool(entry["selected"]),
            "accessRole": role,
            "defaultReminders": json.loads(entry["default_reminders"]),
            "primary": True if cal["is_primary"] and cal["owner"] == self.user else None,
            "deleted": True if cal["deleted"] else None,
        }
        return self.clean(out)

    def _list_row(self, calendar_id: str) -> tuple[sqlite3.Row, sqlite3.Row, str]:
        """The user's list entry for a calendar, or the right NOT_FOUND."""
        cid = resolve_calendar_id(self.user, calendar_id)
        found = self.store.one(
            "SELECT l.*, c.id AS cid FROM calendar_list l JOIN calendars c ON c.id = l.calendar_id "
            "WHERE l.user_email = ? AND lower(c.id) = lower(?) AND c.deleted = 0",
            (self.user, cid),
        )
        role = effective_role(self.store, self.user, found["cid"]) if found else "none"
        if found is None or role == "none":
            access = self.access(calendar_id, "freeBusyReader", "see it")  # NOT_FOUND if no role
            raise ApiError(
                "NOT_FOUND",
                f"Calendar {access.id} is not in your calendar list.",
                field="calendarId",
                expected="a calendar id from calendarList_list",
                got=calendar_id,
                hint=f"You can access it but have not added it; use calendarList_insert(id="
                f"{access.id!r}) first, or use its id directly with the events_* tools.",
            )
        cal = self.store.one("SELECT * FROM calendars WHERE id = ?", (found["cid"],))
        assert cal is not None
        return found, cal, role

    # -- calendarList ------------------------------------------------------------------------

    @tool(annotations={"readOnlyHint": True})
    def calendarList_list(
        self,
        maxResults: Annotated[int | None, Field(ge=1, le=250)] = None,
        pageToken: PageToken = None,
        minAccessRole: MinRole = None,
        showDeleted: bool = False,
        showHidden: bool = False,
    ) -> dict[str, Any]:
        """List the calendars in your calendar list, with your accessRole on each."""
        rows = self.store.all(
            "SELECT l.*, c.id AS cid FROM calendar_list l JOIN calendars c ON c.id = l.calendar_id "
            "WHERE l.user_email = ?",
            (self.user,),
        )
        items = []
        for entry in rows:
            cal = self.store.one("SELECT * FROM calendars WHERE id = ?", (entry["cid"],))
            assert cal is not None
            role = effective_role(self.store, self.user, cal["id"])
            if role == "none" or (cal["deleted"] and not showDeleted):
                continue
            if entry["hidden"] and not showHidden:
                continue
            if minAccessRole and RANK[role] < RANK[minAccessRole]:
                continue
            items.append(self._entry(entry, cal, role))
        items.sort(
            key=lambda e: (
                not e.get("primary"),
                (e.get("summaryOverride") or e["summary"]).lower(),
                e["id"],
            )
        )
        page, token = self.page(items, maxResults, pageToken, default=100)
        return self.collection("calendar#calendarList", page, token)

    @tool(annotations={"readOnlyHint": True})
    def calendarList_get(self, calendarId: CalendarId) -> dict[str, Any]:
        """Get one entry of your calendar list."""
        entry, cal, role = self._list_row(calendarId)
        return self._entry(entry, cal, role)

    @tool
    def calendarList_insert(
        self,
        id: Annotated[str, Field(description="The id of a calendar you can access.")],
        summaryOverride: str | None = None,
        colorId: CalendarColor = None,
        backgroundColor: HexColor = None,
        foregroundColor: HexColor = None,
        hidden: bool | None = None,
        selected: bool | None = None,
        defaultReminders: list[ReminderOverride] | None = None,
    ) -> dict[str, Any]:
        """Add a calendar you have access to (any role) to your calendar list."""
        access = self.access(id, "freeBusyReader", "add it to your list", field="id")
        if self.store.one(
            "SELECT 1 FROM calendar_list WHERE user_email = ? AND calendar_id = ?",
            (self.user, access.id),
        ):
            raise ApiError(
                "CONFLICT",
                f"Calendar {access.id} is already in your calendar list.",
                field="id",
                expected="a calendar not yet in your list",
                got=id,
                hint="Use calendarList_patch to change its entry.",
            )
        color = colorId or calendar_color_for(access.id)
        self.store.run(
            "INSERT INTO calendar_list (user_email, calendar_id, color_id, background_color, etag) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                self.user,
                access.id,
                color,
                CALENDAR_COLORS[color]["background"],
                make_etag(self.user, access.id),
            ),
        )
        return self._patch_entry(
            access.id, summaryOverride, colorId, backgroundColor, foregroundColor, hidden,
            selected, defaultReminders,
        )  # fmt: skip

    def _patch_entry(
        self,
        cid: str,
        summary_override: str | None,
        color_id: str | None,
        background: str | None,
        foreground: str | None,
        hidden: bool | None,
        selected: bool | None,
        reminders: list[ReminderOverride] | None,
    ) -> dict[str, Any]:
        changes: dict[str, Any] = {
            "summary_override": summary_override if summary_override != "" else None,
            "color_id": color_id,
            "background_color": background
            or (color_id and CALENDAR_COLORS[color_id]["background"]),
            "foreground_color": foreground,
            "hidden": None if hidden is None else int(hidden),
            "selected": None if selected is None else int(selected),
            "default_reminders": None
            if reminders is None
            else json.dumps([r.model_dump() for r in reminders]),
        }
        for column, value in changes.items():
            if value is not None or (column == "summary_override" and summary_override == ""):
                self.store.run(
                    f"UPDATE calendar_list SET {column} = ? "
                    "WHERE user_email = ? AND calendar_id = ?",
                    (value, self.user, cid),
                )
        self.store.run(
            "UPDATE calendar_list SET etag = ? WHERE user_email = ? AND calendar_id = ?",
            (make_etag(self.user, cid, self.store.tick()), self.user, cid),
        )
        entry, cal, role = self._list_row(cid)
        return self._entry(entry, cal, role)

    @tool
    def calendarList_patch(
        self,
        calendarId: CalendarId,
        summaryOverride: Annotated[
            str | None, Field(description="Your own name for it ('' removes the override).")
        ] = None,
        colorId: CalendarColor = None,
        backgroundColor: HexColor = None,
        foregroundColor: HexColor = None,
        hidden: bool | None = None,
        selected: bool | None = None,
        defaultReminders: list[ReminderOverride] | None = None,
    ) -> dict[str, Any]:
        """Change your own entry for a calendar (name override, color, hidden, selected)."""
        _, cal, _ = self._list_row(calendarId)
        return self._patch_entry(
            cal["id"], summaryOverride, colorId, backgroundColor, foregroundColor, hidden,
            selected, defaultReminders,
        )  # fmt: skip

    @tool
    def calendarList_delete(self, calendarId: CalendarId) -> dict[str, Any]:
        """Remove a calendar from your calendar list (the calendar itself is not deleted)."""
        _, cal, _ = self._list_row(calendarId)
        if cal["is_primary"] and cal["owner"] == self.user:
            raise ApiError(
                "FORBIDDEN_OPERATION",
                "Your primary calendar cannot be removed from your calendar list.",
                field="calendarId",
                expected="a calendar other than your primary",
                got=calendarId,
                hint="Hide it instead with calendarList_patch(hidden=true).",
            )
        self.store.run(
            "DELETE FROM calendar_list WHERE user_email = ? AND calendar_id = ?",
            (self.user, cal["id"]),
        )
        return {"calendarId": cal["id"], "removedFromList": True}

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
        summary: Annotated[str, Field(min_length=1, description="The new calendar's title.")],
        description: str | None = None,
        location: str | None = None,
        timeZone: TimeZoneName = None,
    ) -> dict[str, Any]:
        """Create a secondary calendar that you own (it is added to your calendar list)."""
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

    @tool
    def calendars_patch(
        self,
        calendarId: CalendarId,
        summary: Annotated[str | None, Field(min_length=1)] = None,
        description: str | None = None,
        location: str | None = None,
        timeZone: TimeZoneName = None,
    ) -> dict[str, Any]:
        """Change a calendar's title, description, location or time zone (needs owner)."""
        access = self.access(calendarId, "owner", "change the calendar's settings")
        for column, value in (("summary", summary), ("description", description),
                              ("location", location), ("time_zone", timeZone)):  # fmt: skip
            if value is not None:
                self.store.run(
                    f"UPDATE calendars SET {column} = ? WHERE id = ?", (value, access.id)
                )
        self.store.run(
            "UPDATE calendars SET etag = ? WHERE id = ?",
            (make_etag(access.id, self.store.tick()), access.id),
        )
        row = self.store.one("SELECT * FROM calendars WHERE id = ?", (access.id,))
        assert row is not None
        return self._calendar(row)

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
