"""Argument types of the Calendar tools: Google Calendar API v3 resources, field for field.

These models only describe arguments; the tool schemas the agent sees are generated from them.
Formats pydantic cannot express (RFC 3339 with offset, IANA zones, RRULE, emails) are marked with an
`x-format` key that `validation.check_arguments` enforces, so every problem of a call is reported
in one structured error.

Example:
    >>> EventDateTime(dateTime="2026-03-05T10:00:00-05:00").model_dump(exclude_none=True)
    {'dateTime': '2026-03-05T10:00:00-05:00'}
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ATTENDEES_MAX",
    "DESCRIPTION_MAX",
    "PROPERTIES_MAX",
    "PROPERTY_KEY_MAX",
    "RECURRENCE_MAX",
    "TEXT_MAX",
    "AclRole",
    "AclScope",
    "Attendee",
    "Attendees",
    "BirthdayProperties",
    "CalendarId",
    "Description",
    "End",
    "EventColor",
    "EventDateTime",
    "EventId",
    "EventTypeName",
    "ExtendedProperties",
    "FocusTimeProperties",
    "FreeBusyItem",
    "Location",
    "MaxResults",
    "NewId",
    "OptEnd",
    "OptStart",
    "OutOfOfficeProperties",
    "PageToken",
    "Recurrence",
    "ReminderOverride",
    "Reminders",
    "RoleName",
    "SendUpdates",
    "Start",
    "Status",
    "Summary",
    "TimeBound",
    "TimeZoneName",
    "Transparency",
    "Visibility",
    "WorkingLocationProperties",
    "dump",
]


# Field sizes (docs/calendar_gym.md "Limits"): Google documents ~8,192 characters for a
# description and, for extended properties, keys of at most 44 characters, values of at most
# 1,024 and 300 properties per event; the other bounds are ours, generous for any real event,
# and together they bound what one call can store and what one event costs to list.
DESCRIPTION_MAX = 8192
TEXT_MAX = 1024
"""Summary, location, an attendee's display name or comment, a recurrence line, a property."""
ATTENDEES_MAX = 100
RECURRENCE_MAX = 20
PROPERTIES_MAX = 300
PROPERTY_KEY_MAX = 44

Properties = Annotated[
    dict[
        Annotated[str, Field(max_length=PROPERTY_KEY_MAX)],
        Annotated[str, Field(max_length=TEXT_MAX)],
    ],
    Field(max_length=PROPERTIES_MAX),
]


def _fmt(kind: str, **more: Any) -> dict[str, Any]:
    return {"x-format": kind, **more}


class ApiModel(BaseModel):
    """Base of the argument models: unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid")


class EventDateTime(ApiModel):
    """When an event starts or ends: `dateTime` (timed) or `date` (all-day), never both."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=_fmt(
            "event-datetime",
            **{"x-example": {"dateTime": "2026-03-05T10:00:00-05:00"}},
        ),
    )

    date: str | None = Field(
        None, description="All-day events only: YYYY-MM-DD (end.date is exclusive)."
    )
    dateTime: str | None = Field(
        None,
        description="RFC 3339 with an offset (2026-03-05T10:00:00-05:00), or a local time "
        "(2026-03-05T10:00:00) together with timeZone.",
    )
    timeZone: str | None = Field(
        None, description="IANA time zone, e.g. America/New_York (required for local times)."
    )


class Attendee(ApiModel):
    """A guest of an event."""

    email: str = Field(
        description="The guest's email address.", max_length=254, json_schema_extra=_fmt("email")
    )
    displayName: Annotated[str, Field(max_length=TEXT_MAX)] | None = None
    optional: bool | None = None
    responseStatus: Literal["needsAction", "declined", "tentative", "accepted"] | None = None
    comment: Annotated[str, Field(max_length=TEXT_MAX)] | None = None
    additionalGuests: Annotated[int, Field(ge=0, le=100)] | None = None


class ReminderOverride(ApiModel):
    """One reminder."""

    method: Literal["email", "popup"]
    minutes: Annotated[int, Field(ge=0, le=40320, description="Minutes before the start.")]


class Reminders(ApiModel):
    """An event's reminders: the calendar's defaults, or up to five overrides."""

    useDefault: bool
    overrides: Annotated[list[ReminderOverride], Field(max_length=5)] | None = None


class ExtendedProperties(ApiModel):
    """Free-form string properties: `private` to this copy of the event, `shared` with guests."""

    private: Properties | None = None
    shared: Properties | None = None


class AclScope(ApiModel):
    """Who an ACL rule applies to."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra=_fmt(
            "acl-scope", **{"x-example": {"type": "user", "value": "bob@acme.test"}}
        ),
    )

    type: Literal["default", "user", "group", "domain"] = Field(
        description="default = everyone; user/group = an email; domain = a domain name."
    )
    value: str | None = Field(None, description="The email or domain; omitted for type 'default'.")


class FreeBusyItem(ApiModel):
    """A calendar (or group email) to query."""

    id: str = Field(description="A calendar id, 'primary', a user's email or a group's email.")


RoleName = Literal["freeBusyReader", "reader", "writerWithoutPrivateAccess", "writer", "owner"]
AclRole = Literal[
    "none", "freeBusyReader", "reader", "writerWithoutPrivateAccess", "writer", "owner"
]

CalendarId = Annotated[
    str,
    Field(
        description="A calendar id from calendarList_list, a user's email for their primary "
        "calendar, or 'primary' for your own."
    ),
]
TimeBound = Annotated[
    str | None,
    Field(
        description="RFC 3339 date-time with an offset, e.g. 2026-03-05T00:00:00-05:00.",
        json_schema_extra=_fmt("rfc3339"),
    ),
]
TimeZoneName = Annotated[
    str | None,
    Field(description="IANA time zone, e.g. Europe/London.", json_schema_extra=_fmt("time-zone")),
]
MaxResults = Annotated[int | None, Field(ge=1, le=2500, description="Page size.")]
PageToken = Annotated[str | None, Field(description="nextPageToken of the previous page.")]
SendUpdates = Annotated[
    Literal["all", "externalOnly", "none"] | None,
    Field(description="Who gets notified (recorded only; no mail is sent)."),
]
SendNotifications = Annotated[
    bool | None,
    Field(description="Deprecated in v3 in favour of sendUpdates; accepted, no mail is sent."),
]
EventTypeName = Literal[
    "birthday", "default", "focusTime", "fromGmail", "outOfOffice", "workingLocation"
]
AutoDeclineMode = Annotated[
    Literal["declineNone", "declineAllConflictingInvitations",
            "declineOnlyNewConflictingInvitations"] | None,
    Field(description="Which overlapping invitations Calendar declines (recorded only)."),
]  # fmt: skip


class FocusTimeProperties(ApiModel):
    """A focusTime event's data (v3 `EventFocusTimeProperties`)."""

    autoDeclineMode: AutoDeclineMode = None
    chatStatus: Literal["available", "doNotDisturb"] | None = None
    declineMessage: str | None = None


class OutOfOfficeProperties(ApiModel):
    """An outOfOffice event's data (v3 `EventOutOfOfficeProperties`)."""

    autoDeclineMode: AutoDeclineMode = None
    declineMessage: str | None = None


class OfficeLocation(ApiModel):
    """Where in an office (every field optional)."""

    buildingId: str | None = None
    deskId: str | None = None
    floorId: str | None = None
    floorSectionId: str | None = None
    label: str | None = None


class CustomLocation(ApiModel):
    """A custom working location."""

    label: str | None = None


class WorkingLocationProperties(ApiModel):
    """A workingLocation event's data (v3 `EventWorkingLocationProperties`)."""

    type: Literal["homeOffice", "officeLocation", "customLocation"] = Field(
        description="Required: which of the other fields describes the location."
    )
    homeOffice: dict[str, Any] | None = Field(None, description="Present ({}) when at home.")
    officeLocation: OfficeLocation | None = None
    customLocation: CustomLocation | None = None


class BirthdayProperties(ApiModel):
    """A birthday event's data (v3 `EventBirthdayProperties`; only type 'birthday' can be
    created through the API)."""

    type: Literal["anniversary", "birthday", "custom", "other", "self"] | None = None


# -- event fields shared by events_insert / patch / update ------------------------------------

EventId = Annotated[str, Field(description="An event id from events_list (or an instance id).")]
Summary = Annotated[str | None, Field(description="The event's title.", max_length=TEXT_MAX)]
Description = Annotated[
    str | None, Field(description="Notes; may contain HTML.", max_length=DESCRIPTION_MAX)
]
Location = Annotated[str | None, Field(description="Free-form location.", max_length=TEXT_MAX)]
Attendees = Annotated[
    list[Attendee] | None,
    Field(
        description='Guests, e.g. [{"email": "bob@acme.test"}]. Replaces the whole list.',
        max_length=ATTENDEES_MAX,
    ),
]
Recurrence = Annotated[
    list[Annotated[str, Field(max_length=TEXT_MAX)]] | None,
    Field(
        description="RFC 5545 lines, e.g. ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10'].",
        max_length=RECURRENCE_MAX,
        json_schema_extra={"x-format": "recurrence"},
    ),
]
Visibility = Literal["default", "public", "private", "confidential"] | None
Transparency = Annotated[
    Literal["opaque", "transparent"] | None,
    Field(description="opaque = busy (default); transparent = shows as free."),
]
EventColor = Literal["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"] | None
Status = Literal["confirmed", "tentative", "cancelled"] | None
Start = Annotated[EventDateTime, Field(description="When it starts.")]
End = Annotated[EventDateTime, Field(description="When it ends (exclusive).")]
OptStart = Annotated[EventDateTime | None, Field(description="New start.")]
OptEnd = Annotated[EventDateTime | None, Field(description="New end (exclusive).")]
NewId = Annotated[
    str | None,
    Field(
        description="Optional custom id (a-v, 0-9; 5-1024 chars).",
        json_schema_extra={"x-format": "event-id"},
    ),
]


def dump(model: BaseModel | None) -> dict[str, Any] | None:
    """A model as a plain dict without unset (None) fields."""
    return None if model is None else model.model_dump(exclude_none=True)
