"""The `calendarList_*` tools: each user's own list of calendars.

The calendar list is per user: entries carry the user's `accessRole` (computed from the ACL),
color, visibility and an optional `summaryOverride`. `calendarList_patch` changes the fields it
is given; `calendarList_update` (v3's PUT) replaces the entry: what it is not given returns to
the discovery document's default (no override, the calendar's default color, not hidden, not
selected, no default reminders).

Colors follow Google's `colorRgbFormat` rule: a write sets `colorId`, and the entry's
`backgroundColor`/`foregroundColor` become that palette color's; with `colorRgbFormat=true` the
RGB fields are written and `colorId` becomes the closest palette color. Without it an RGB field
is accepted only when it repeats the entry's current color or the given `colorId`'s (a body read
with `calendarList_get` and sent back); any other value is refused, naming `colorRgbFormat`,
rather than silently ignored.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Annotated, Any, Literal

from pydantic import Field

from calendar_gym.tools.context import CalendarContext
from calendar_gym.tools.models import TEXT_MAX, CalendarId, PageToken, ReminderOverride
from calendar_gym.world.acl import RANK, effective_role, resolve_calendar_id
from calendar_gym.world.colors import (
    CALENDAR_COLORS,
    calendar_color_for,
    nearest_calendar_color,
)
from calendar_gym.world.errors import ApiError
from calendar_gym.world.eventdata import make_etag
from mcpgym import tool

__all__ = ["CalendarColor", "CalendarListTools", "HexColor"]

CalendarColor = Literal[
    "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12",
    "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24",
] | None  # fmt: skip
HexColor = Annotated[str | None, Field(json_schema_extra={"x-format": "hex-color"})]
RgbFormat = Annotated[
    bool | None,
    Field(description="Write backgroundColor/foregroundColor (colorId becomes the closest)."),
]
MinRole = (
    Literal["freeBusyReader", "reader", "writerWithoutPrivateAccess", "writer", "owner"] | None
)


class CalendarListTools(CalendarContext):
    """Tool mixin: the acting user's calendar list."""

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
                self.listing_key(e["id"]) if self.order_salt else "",  # seeded (suite v3)
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
        summaryOverride: Annotated[str, Field(max_length=TEXT_MAX)] | None = None,
        colorId: CalendarColor = None,
        backgroundColor: HexColor = None,
        foregroundColor: HexColor = None,
        hidden: bool | None = None,
        selected: bool | None = None,
        defaultReminders: list[ReminderOverride] | None = None,
        colorRgbFormat: RgbFormat = None,
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
        color = calendar_color_for(access.id)
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
            selected, defaultReminders, colorRgbFormat,
        )  # fmt: skip

    def _colors(
        self,
        cid: str,
        color_id: str | None,
        background: str | None,
        foreground: str | None,
        rgb: bool | None,
    ) -> tuple[str, str, str] | None:
        """The `(colorId, backgroundColor, foregroundColor)` a write sets, or None when it sets
        no color (the rule is in the module docstring)."""
        current = self.store.one(
            "SELECT color_id, background_color, foreground_color FROM calendar_list "
            "WHERE user_email = ? AND calendar_id = ?",
            (self.user, cid),
        )
        now = (current["background_color"], current["foreground_color"]) if current else ()
        if rgb:
            if background is None and foreground is None:
                if color_id is None:
                    return None
                palette = CALENDAR_COLORS[color_id]
                return color_id, palette["background"], palette["foreground"]
            bg = background or (now[0] if now else CALENDAR_COLORS["1"]["background"])
            near = nearest_calendar_color(bg)
            return near, bg, foreground or CALENDAR_COLORS[near]["foreground"]
        palette = CALENDAR_COLORS[color_id] if color_id else None
        given = (("backgroundColor", "background", background, 0),
                 ("foregroundColor", "foreground", foreground, 1))  # fmt: skip
        for name, key, value, i in given:
            if value is None:
                continue
            same = {str(now[i]).lower()} if now else set()
            if palette:
                same.add(palette[key].lower())
            if value.lower() not in same:
                raise ApiError(
                    "INVALID_VALUE",
                    f"{name} is written only with colorRgbFormat=true.",
                    field=name,
                    expected="the entry's current color, or colorRgbFormat=true",
                    got=value,
                    hint=f"Pass colorRgbFormat=true to set {name}={value!r} (colorId becomes "
                    "the closest palette color), or set colorId alone (colors_get lists them).",
                )
        if color_id is None or palette is None:
            return None
        return color_id, palette["background"], palette["foreground"]

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
        rgb: bool | None = None,
    ) -> dict[str, Any]:
        colors = self._colors(cid, color_id, background, foreground, rgb)
        changes: dict[str, Any] = {
            "summary_override": summary_override if summary_override != "" else None,
            "color_id": colors and colors[0],
            "background_color": colors and colors[1],
            "foreground_color": colors and colors[2],
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
        colorRgbFormat: RgbFormat = None,
    ) -> dict[str, Any]:
        """Change your own entry for a calendar (name override, color, hidden, selected)."""
        _, cal, _ = self._list_row(calendarId)
        return self._patch_entry(
            cal["id"], summaryOverride, colorId, backgroundColor, foregroundColor, hidden,
            selected, defaultReminders, colorRgbFormat,
        )  # fmt: skip

    @tool
    def calendarList_update(
        self,
        calendarId: CalendarId,
        summaryOverride: Annotated[
            str | None, Field(description="Your own name for it (omitted: none).")
        ] = None,
        colorId: CalendarColor = None,
        backgroundColor: HexColor = None,
        foregroundColor: HexColor = None,
        hidden: bool | None = None,
        selected: bool | None = None,
        defaultReminders: list[ReminderOverride] | None = None,
        colorRgbFormat: RgbFormat = None,
    ) -> dict[str, Any]:
        """Replace your own entry for a calendar: fields you omit return to their defaults (no
        override, the calendar's default color, hidden=false, selected=false, no default
        reminders). To change one field only, use calendarList_patch."""
        _, cal, _ = self._list_row(calendarId)
        cid = cal["id"]
        default = calendar_color_for(cid)
        colors = self._colors(cid, colorId, backgroundColor, foregroundColor, colorRgbFormat)
        if colors is None:
            palette = CALENDAR_COLORS[default]
            colors = (default, palette["background"], palette["foreground"])
        values = {
            "summary_override": summaryOverride or None,
            "color_id": colors[0],
            "background_color": colors[1],
            "foreground_color": colors[2],
            "hidden": int(bool(hidden)),
            "selected": int(bool(selected)),
            "default_reminders": json.dumps([r.model_dump() for r in defaultReminders or []]),
            "etag": make_etag(self.user, cid, self.store.tick()),
        }
        self.store.run(
            f"UPDATE calendar_list SET {', '.join(f'{c} = ?' for c in values)} "
            "WHERE user_email = ? AND calendar_id = ?",
            (*values.values(), self.user, cid),
        )
        entry, cal, role = self._list_row(cid)
        return self._entry(entry, cal, role)

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
