"""The `events_*` tools (Calendar API v3 `Events`): list, get, insert, patch, update, delete,
move, instances.

Reading needs the reader role (private events come back busy-only unless you own the calendar);
writing needs writer; moving needs writer on both calendars.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from calendar_gym.acl import Access
from calendar_gym.context import CalendarContext
from calendar_gym.errors import ApiError
from calendar_gym.event_query import Window, find_event, rows_in_window
from calendar_gym.event_write import delete_event, insert_event, move_event, write_event
from calendar_gym.eventdata import PRIVATE_VISIBILITIES, event_bounds, render_event
from calendar_gym.models import (
    Attendees,
    CalendarId,
    Description,
    End,
    EventColor,
    EventId,
    EventTypeName,
    ExtendedProperties,
    Location,
    MaxResults,
    NewId,
    OptEnd,
    OptStart,
    PageToken,
    Recurrence,
    Reminders,
    SendNotifications,
    SendUpdates,
    Start,
    Status,
    Summary,
    TimeBound,
    TimeZoneName,
    Transparency,
    Visibility,
)
from calendar_gym.timeutil import format_utc_z
from mcpgym import tool

__all__ = ["EventTools"]


def _body(**fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, BaseModel):
            value = value.model_dump(exclude_none=True)
        elif isinstance(value, list):
            value = [
                v.model_dump(exclude_none=True) if isinstance(v, BaseModel) else v for v in value
            ]
        out[key] = value
    return out


class EventTools(CalendarContext):
    """Tool mixin: events of a calendar."""

    def _render(self, row: dict[str, Any], access: Access, tz: str | None = None) -> dict[str, Any]:
        return render_event(
            row,
            cal_tz=access.time_zone,
            user=self.user,
            names=self.names(),
            tz_override=tz,
            busy_only=row["visibility"] in PRIVATE_VISIBILITIES and not access.sees_private,
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
            Field(description="Only these event types (every event here is 'default')."),
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
        )
        owner = access.sees_private
        if q:
            words = q.lower().split()
            rows = [r for r in rows if (owner or r["visibility"] not in PRIVATE_VISIBILITIES)
                    and all(w in _text(r) for w in words)]  # fmt: skip
        if iCalUID:
            rows = [r for r in rows if r["ical_uid"] == iCalUID]
        if eventTypes is not None and "default" not in eventTypes:
            rows = []  # only default events exist here (typed events are out of scope)
        since = self.instant(updatedMin)
        if since is not None:
            rows = [r for r in rows if r["updated"] >= since.strftime("%Y-%m-%dT%H:%M:%S")]
        if orderBy == "updated":
            rows.sort(key=lambda r: (r["updated"], r["id"]))
        else:
            rows.sort(key=lambda r: (event_bounds(r, access.time_zone)[0], r["id"]))
        page, token = self.page(rows, maxResults, pageToken)
        return self._listing(
            access, [self._render(r, access, timeZone) for r in page], timeZone, token
        )

    @tool(annotations={"readOnlyHint": True})
    def events_get(
        self, calendarId: CalendarId, eventId: EventId, timeZone: TimeZoneName = None
    ) -> dict[str, Any]:
        """Get one event or one instance of a recurring event (needs reader)."""
        access = self.access(calendarId, "reader", "read its events")
        row = find_event(self.store, self.user, access.id, eventId, access.time_zone)
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
        from calendar_gym.event_query import expand

        access = self.access(calendarId, "reader", "read its events")
        master = find_event(self.store, self.user, access.id, eventId, access.time_zone)
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
        page, token = self.page(rows, maxResults, pageToken)
        return self._listing(
            access, [self._render(r, access, timeZone) for r in page], timeZone, token
        )

    @tool
    def events_insert(
        self,
        calendarId: CalendarId,
        start: Start,
        end: End,
        summary: Summary = None,
        description: Description = None,
        location: Location = None,
        attendees: Attendees = None,
        recurrence: Recurrence = None,
        visibility: Visibility = None,
        transparency: Transparency = None,
        colorId: EventColor = None,
        reminders: Reminders | None = None,
        status: Status = None,
        id: NewId = None,
        extendedProperties: ExtendedProperties | None = None,
        guestsCanModify: bool | None = None,
        guestsCanInviteOthers: bool | None = None,
        guestsCanSeeOtherGuests: bool | None = None,
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Create an event (needs writer on the calendar).

        Times: RFC 3339 with an offset, or a local time plus timeZone; all-day events use
        start.date/end.date (end exclusive).
        """
        access = self.access(calendarId, "writer", "add events")
        body = _body(
            start=start, end=end, summary=summary, description=description, location=location,
            attendees=attendees, recurrence=recurrence, visibility=visibility,
            transparency=transparency, colorId=colorId, reminders=reminders, status=status, id=id,
            extendedProperties=extendedProperties, guestsCanModify=guestsCanModify,
            guestsCanInviteOthers=guestsCanInviteOthers,
            guestsCanSeeOtherGuests=guestsCanSeeOtherGuests,
        )  # fmt: skip
        row = insert_event(self.store, self.user, access.id, access.time_zone, body)
        return self._render(row, access)

    @tool
    def events_patch(
        self,
        calendarId: CalendarId,
        eventId: EventId,
        start: OptStart = None,
        end: OptEnd = None,
        summary: Summary = None,
        description: Description = None,
        location: Location = None,
        attendees: Attendees = None,
        recurrence: Recurrence = None,
        visibility: Visibility = None,
        transparency: Transparency = None,
        colorId: EventColor = None,
        reminders: Reminders | None = None,
        status: Status = None,
        extendedProperties: ExtendedProperties | None = None,
        guestsCanModify: bool | None = None,
        guestsCanInviteOthers: bool | None = None,
        guestsCanSeeOtherGuests: bool | None = None,
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Change some fields of an event (needs writer); omitted fields stay as they are.

        Patching an instance id ({eventId}_{YYYYMMDDTHHMMSSZ}) changes only that occurrence.
        """
        access = self.access(calendarId, "writer", "change its events")
        row = find_event(self.store, self.user, access.id, eventId, access.time_zone)
        body = _body(
            start=start, end=end, summary=summary, description=description, location=location,
            attendees=attendees, recurrence=recurrence, visibility=visibility,
            transparency=transparency, colorId=colorId, reminders=reminders, status=status,
            extendedProperties=extendedProperties, guestsCanModify=guestsCanModify,
            guestsCanInviteOthers=guestsCanInviteOthers,
            guestsCanSeeOtherGuests=guestsCanSeeOtherGuests,
        )  # fmt: skip
        updated = write_event(self.store, row, access.time_zone, body, replace=False)
        return self._render(updated, access)

    @tool
    def events_update(
        self,
        calendarId: CalendarId,
        eventId: EventId,
        start: Start,
        end: End,
        summary: Summary = None,
        description: Description = None,
        location: Location = None,
        attendees: Attendees = None,
        recurrence: Recurrence = None,
        visibility: Visibility = None,
        transparency: Transparency = None,
        colorId: EventColor = None,
        reminders: Reminders | None = None,
        status: Status = None,
        extendedProperties: ExtendedProperties | None = None,
        guestsCanModify: bool | None = None,
        guestsCanInviteOthers: bool | None = None,
        guestsCanSeeOtherGuests: bool | None = None,
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Replace an event (needs writer): fields you omit are reset to their defaults."""
        access = self.access(calendarId, "writer", "change its events")
        row = find_event(self.store, self.user, access.id, eventId, access.time_zone)
        body = _body(
            start=start, end=end, summary=summary, description=description, location=location,
            attendees=attendees, recurrence=recurrence, visibility=visibility,
            transparency=transparency, colorId=colorId, reminders=reminders, status=status,
            extendedProperties=extendedProperties, guestsCanModify=guestsCanModify,
            guestsCanInviteOthers=guestsCanInviteOthers,
            guestsCanSeeOtherGuests=guestsCanSeeOtherGuests,
        )  # fmt: skip
        updated = write_event(self.store, row, access.time_zone, body, replace=True)
        return self._render(updated, access)

    @tool
    def events_delete(
        self,
        calendarId: CalendarId,
        eventId: EventId,
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Delete an event (needs writer): it becomes status 'cancelled'.

        A master id cancels the whole series; an instance id cancels one occurrence.
        """
        access = self.access(calendarId, "writer", "delete its events")
        row = find_event(self.store, self.user, access.id, eventId, access.time_zone)
        delete_event(self.store, row)
        return {"calendarId": access.id, "id": row["id"], "status": "cancelled"}

    @tool
    def events_move(
        self,
        calendarId: Annotated[str, Field(description="The calendar the event is on now.")],
        eventId: EventId,
        destination: Annotated[str, Field(description="The calendar id to move it to.")],
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Move an event to another calendar (needs writer on both calendars)."""
        source = self.access(calendarId, "writer", "move events off it")
        target = self.access(destination, "writer", "move events onto it", field="destination")
        row = find_event(self.store, self.user, source.id, eventId, source.time_zone)
        moved = move_event(self.store, row, target.id)
        return self._render(moved, target)


def _text(row: dict[str, Any]) -> str:
    parts = [
        row["summary"] or "",
        row["description"] or "",
        row["location"] or "",
        row["attendees"],
    ]
    return " ".join(parts).lower()
