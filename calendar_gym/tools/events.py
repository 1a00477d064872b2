"""The writing `events_*` tools (Calendar API v3 `Events`): insert, import, patch, update,
delete, move (reading is in `tools_events_read`).

Writing needs writer; moving needs writer on both calendars. `eventType` is accepted on insert
(and on patch/update only unchanged: a type is fixed at creation), with the property block of
its type; `calendar_gym.events.rules` checks what each type needs and, from suite v2 on, that a
recurring event names its time zone.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from calendar_gym.events.query import find_event
from calendar_gym.events.rules import STATUS_TYPES, WriteRules, rule_applies
from calendar_gym.events.write import delete_event, insert_event, move_event, write_event
from calendar_gym.tools.events_read import EventReadTools
from calendar_gym.tools.models import (
    Attendees,
    BirthdayProperties,
    CalendarId,
    Description,
    End,
    EventColor,
    EventId,
    EventTypeName,
    ExtendedProperties,
    FocusTimeProperties,
    Location,
    NewId,
    OptEnd,
    OptStart,
    OutOfOfficeProperties,
    Recurrence,
    Reminders,
    SendNotifications,
    SendUpdates,
    Start,
    Status,
    Summary,
    Transparency,
    Visibility,
    WorkingLocationProperties,
)
from calendar_gym.world.acl import Access
from calendar_gym.world.errors import ApiError
from mcpgym import tool

__all__ = ["EventTools"]

EventType = Annotated[
    EventTypeName | None,
    Field(
        description="default (omitted), focusTime, outOfOffice, workingLocation (primary "
        "calendars only) or birthday; fixed once the event exists."
    ),
]
FocusTime = Annotated[FocusTimeProperties | None, Field(description="For eventType focusTime.")]
OutOfOffice = Annotated[
    OutOfOfficeProperties | None, Field(description="For eventType outOfOffice.")
]
WorkingLocation = Annotated[
    WorkingLocationProperties | None, Field(description="For eventType workingLocation.")
]
Birthday = Annotated[BirthdayProperties | None, Field(description="For eventType birthday.")]


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


class EventTools(EventReadTools):
    """Tool mixin: writing the events of a calendar (and, inherited, reading them)."""

    def _rules(self, access: Access) -> WriteRules:
        return WriteRules(
            primary=bool(access.calendar["is_primary"]),
            recurring_time_zone=rule_applies("recurring_time_zone", self.suite_version),
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
        eventType: EventType = None,
        focusTimeProperties: FocusTime = None,
        outOfOfficeProperties: OutOfOffice = None,
        workingLocationProperties: WorkingLocation = None,
        birthdayProperties: Birthday = None,
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Create an event (needs writer on the calendar).

        Times: RFC 3339 with an offset, or a local time plus timeZone; all-day events use
        start.date/end.date (end exclusive). A recurring timed event needs start.timeZone and
        end.timeZone.
        """
        access = self.access(calendarId, "writer", "add events")
        body = _body(
            start=start, end=end, summary=summary, description=description, location=location,
            attendees=attendees, recurrence=recurrence, visibility=visibility,
            transparency=transparency, colorId=colorId, reminders=reminders, status=status, id=id,
            extendedProperties=extendedProperties, guestsCanModify=guestsCanModify,
            guestsCanInviteOthers=guestsCanInviteOthers,
            guestsCanSeeOtherGuests=guestsCanSeeOtherGuests, eventType=eventType,
            focusTimeProperties=focusTimeProperties, outOfOfficeProperties=outOfOfficeProperties,
            workingLocationProperties=workingLocationProperties,
            birthdayProperties=birthdayProperties,
        )  # fmt: skip
        row = insert_event(
            self.store, self.user, access.id, access.time_zone, body, self._rules(access)
        )
        return self._render(row, access)

    @tool
    def events_import(
        self,
        calendarId: CalendarId,
        iCalUID: Annotated[
            str, Field(min_length=1, description="The event's RFC 5545 UID (required).")
        ],
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
        eventType: Annotated[
            EventTypeName | None, Field(description="Only 'default' events can be imported.")
        ] = None,
    ) -> dict[str, Any]:
        """Add a private copy of an existing event, identified by its iCalUID, to a calendar
        (needs writer). Only default events can be imported."""
        access = self.access(calendarId, "writer", "add events")
        if eventType not in (None, "default"):
            raise ApiError(
                "INVALID_VALUE",
                f"Only events of type 'default' can be imported, not {eventType!r}.",
                field="eventType",
                expected="default",
                got=eventType,
                hint="Leave eventType out, or create a typed event with events_insert.",
                example={"eventType": "default"},
            )
        body = _body(
            iCalUID=iCalUID, start=start, end=end, summary=summary, description=description,
            location=location, attendees=attendees, recurrence=recurrence,
            visibility=visibility, transparency=transparency, colorId=colorId,
            reminders=reminders, status=status, extendedProperties=extendedProperties,
            guestsCanModify=guestsCanModify, guestsCanInviteOthers=guestsCanInviteOthers,
            guestsCanSeeOtherGuests=guestsCanSeeOtherGuests,
        )  # fmt: skip
        row = insert_event(
            self.store, self.user, access.id, access.time_zone, body, self._rules(access)
        )
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
        eventType: EventType = None,
        focusTimeProperties: FocusTime = None,
        outOfOfficeProperties: OutOfOffice = None,
        workingLocationProperties: WorkingLocation = None,
        birthdayProperties: Birthday = None,
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Change some fields of an event (needs writer); omitted fields stay as they are.

        Patching an instance id ({eventId}_{YYYYMMDDTHHMMSSZ}) changes only that occurrence.
        """
        access = self.access(calendarId, "writer", "change its events")
        self.refuse_copy(access.id, eventId)
        row = find_event(self.store, self.user, access.id, eventId, access.time_zone)
        body = _body(
            start=start, end=end, summary=summary, description=description, location=location,
            attendees=attendees, recurrence=recurrence, visibility=visibility,
            transparency=transparency, colorId=colorId, reminders=reminders, status=status,
            extendedProperties=extendedProperties, guestsCanModify=guestsCanModify,
            guestsCanInviteOthers=guestsCanInviteOthers,
            guestsCanSeeOtherGuests=guestsCanSeeOtherGuests, eventType=eventType,
            focusTimeProperties=focusTimeProperties, outOfOfficeProperties=outOfOfficeProperties,
            workingLocationProperties=workingLocationProperties,
            birthdayProperties=birthdayProperties,
        )  # fmt: skip
        updated = write_event(
            self.store, row, access.time_zone, body, self._rules(access), replace=False
        )
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
        eventType: EventType = None,
        focusTimeProperties: FocusTime = None,
        outOfOfficeProperties: OutOfOffice = None,
        workingLocationProperties: WorkingLocation = None,
        birthdayProperties: Birthday = None,
        sendUpdates: SendUpdates = None,
        sendNotifications: SendNotifications = None,
    ) -> dict[str, Any]:
        """Replace an event (needs writer): fields you omit are reset to their defaults (its
        eventType stays; a typed event's property block must be given again)."""
        access = self.access(calendarId, "writer", "change its events")
        self.refuse_copy(access.id, eventId)
        row = find_event(self.store, self.user, access.id, eventId, access.time_zone)
        body = _body(
            start=start, end=end, summary=summary, description=description, location=location,
            attendees=attendees, recurrence=recurrence, visibility=visibility,
            transparency=transparency, colorId=colorId, reminders=reminders, status=status,
            extendedProperties=extendedProperties, guestsCanModify=guestsCanModify,
            guestsCanInviteOthers=guestsCanInviteOthers,
            guestsCanSeeOtherGuests=guestsCanSeeOtherGuests, eventType=eventType,
            focusTimeProperties=focusTimeProperties, outOfOfficeProperties=outOfOfficeProperties,
            workingLocationProperties=workingLocationProperties,
            birthdayProperties=birthdayProperties,
        )  # fmt: skip
        updated = write_event(
            self.store, row, access.time_zone, body, self._rules(access), replace=True
        )
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
        self.refuse_copy(access.id, eventId)
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
        self.refuse_copy(source.id, eventId)
        row = find_event(self.store, self.user, source.id, eventId, source.time_zone)
        if row["event_type"] in STATUS_TYPES and not target.calendar["is_primary"]:
            raise ApiError(
                "INVALID_VALUE",
                f"{row['event_type']} events exist only on primary calendars.",
                field="destination",
                expected="a primary calendar",
                got=destination,
                hint="Move it to a person's primary calendar (their email), or leave it.",
            )
        moved = move_event(self.store, row, target.id)
        return self._render(moved, target)
