"""The seed world's events: named ones the task suite refers to, plus deterministic filler.

Times are local wall times in the calendar's zone unless an event says otherwise; a date alone
(`2026-03-16`) makes an all-day event. Named events get stable ids in `EVENT_IDS`; filler comes
from a RNG seeded with the world version, so the world is identical in every process.

Example:
    >>> len(seed_events()) >= 140
    True
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

from calendar_gym.world.ids import WORLD_VERSION, calendar_id, event_id

__all__ = ["EVENT_IDS", "seed_events"]

A, B, C = "alice@acme.test", "bob@acme.test", "carol@acme.test"
AK, D = "alex.kim@acme.test", "dana@acme.test"
AR, E, F = "alex.rivera@globex.test", "erin@globex.test", "frank@globex.test"
WEEKLY = "RRULE:FREQ=WEEKLY;BYDAY="


def _c(key: str) -> str:
    return key if "@" in key else calendar_id(key)


def _ev(key: str, cal: str, summary: str, start: str, end: str, **extra: Any) -> dict[str, Any]:
    """One named event; `end` may be just `HH:MM` (same day); times get seconds added."""
    if len(end) == 5:
        end = f"{start[:10]}T{end}"
    if len(start) > 10:
        start, end = start + ":00", end + ":00"
    return {
        "key": key,
        "calendar": _c(cal),
        "summary": summary,
        "start": start,
        "end": end,
        **extra,
    }


# fmt: off
_NAMED: list[dict[str, Any]] = [
    _ev("one_on_one", A, "1:1 Alice / Bob", "2026-01-05T10:00", "10:30",
        recurrence=[WEEKLY + "MO"], attendees=[A, B], description="Weekly 1:1."),
    _ev("doctor", A, "Doctor appointment", "2026-03-05T08:00", "09:00",
        visibility="private", location="Midtown Medical, 5th Ave"),
    _ev("dentist_alice", A, "Dentist", "2026-03-18T16:00", "17:00", visibility="private"),
    _ev("quarterly_planning", A, "Quarterly planning", "2026-03-10T13:00", "15:00",
        attendees=[A, B, C, AK], location="Boardroom (5F)"),
    _ev("lunch_erin", A, "Lunch with Erin (Globex)", "2026-03-06T12:00", "13:00",
        attendees=[A, E], location="Café Lumen"),
    _ev("focus_time", A, "Focus time", "2026-02-03T14:00", "16:00", recurrence=[WEEKLY + "TU,TH"]),
    _ev("team_sync_eng", "engineering", "Team Sync", "2026-01-06T11:00", "11:30",
        recurrence=[WEEKLY + "TU"], attendees=[A, B, AK], organizer=A),
    _ev("sprint_planning", "engineering", "Sprint planning", "2026-01-12T14:00", "15:00",
        recurrence=["RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO"], attendees=[A, B, AK]),
    _ev("release_42", "engineering", "Release 4.2 go/no-go", "2026-03-12T15:00", "15:30",
        attendees=[A, B]),
    _ev("retro", "engineering", "Sprint retro", "2026-03-20T15:00", "16:00"),
    _ev("team_sync_mkt", "marketing", "Team Sync", "2026-01-07T10:00", "10:30",
        recurrence=[WEEKLY + "WE"], attendees=[C, A]),
    _ev("spring_campaign", "marketing", "Spring campaign launch", "2026-03-16", "2026-03-17"),
    _ev("brand_review", "marketing", "Brand review", "2026-03-11T15:00", "16:00", attendees=[C, A]),
    _ev("winter_campaign", "marketing_archive", "Winter campaign launch",
        "2025-12-01", "2025-12-02"),
    _ev("holiday_retro", "marketing_archive", "Holiday campaign retro",
        "2025-12-15T14:00", "15:00"),
    _ev("launch_mobile", "product_launches", "Mobile app 3.0 launch", "2026-03-25", "2026-03-26"),
    _ev("launch_api", "product_launches", "Public API GA", "2026-04-08", "2026-04-09"),
    _ev("launch_readiness", "product_launches", "Launch readiness review",
        "2026-03-19T10:00", "11:00", attendees=[AK, A, B]),
    _ev("oncall_1", "oncall", "On-call: Bob", "2026-03-02", "2026-03-09",
        transparency="transparent"),
    _ev("oncall_2", "oncall", "On-call: Alice", "2026-03-09", "2026-03-16",
        transparency="transparent"),
    _ev("oncall_3", "oncall", "On-call: Alex Kim", "2026-03-16", "2026-03-23",
        transparency="transparent"),
    _ev("oncall_4", "oncall", "On-call: Bob", "2026-03-23", "2026-03-30",
        transparency="transparent"),
    _ev("presidents_day", "holidays", "Presidents' Day (office closed)", "2026-02-16", "2026-02-17",
        transparency="transparent"),
    _ev("good_friday", "holidays", "Good Friday (office closed)", "2026-04-03", "2026-04-04",
        transparency="transparent"),
    _ev("memorial_day", "holidays", "Memorial Day (office closed)", "2026-05-25", "2026-05-26",
        transparency="transparent"),
    _ev("board_meeting", "boardroom", "Board meeting", "2026-03-10T13:00", "15:00", organizer=A),
    _ev("initech_visit", "boardroom", "Customer visit: Initech", "2026-03-13T10:00", "12:00",
        organizer=B),
    _ev("piano", "personal", "Piano lesson", "2026-01-08T18:00", "19:00",
        recurrence=[WEEKLY + "TH"]),
    _ev("mom_birthday", "personal", "Mom's birthday", "2026-03-21", "2026-03-22",
        recurrence=["RRULE:FREQ=YEARLY"], transparency="transparent"),
    _ev("interview_backend", "hiring", "Interview: Senior Backend Engineer (onsite)",
        "2026-03-09T13:00", "16:00", attendees=[A, B]),
    _ev("interview_designer", "hiring", "Interview: Staff Designer", "2026-03-11T11:00", "12:00",
        attendees=[A, AK]),
    _ev("hiring_committee", "hiring", "Hiring committee", "2026-03-13T16:00", "17:00",
        attendees=[A, B, C]),
    _ev("okr_draft", "q2_planning", "Q2 OKR draft due", "2026-03-20", "2026-03-21"),
    _ev("q2_offsite", "q2_planning", "Q2 planning offsite", "2026-03-26T09:00", "17:00",
        location="Hudson Loft", attendees=[A, B, C, AK, D]),
    _ev("expenses_due", "finance", "Expense reports due", "2026-01-31", "2026-02-01",
        recurrence=["RRULE:FREQ=MONTHLY;BYMONTHDAY=-1"], transparency="transparent"),
    _ev("budget_review", "finance", "Budget review", "2026-03-17T14:00", "15:00", attendees=[D, A]),
    _ev("q1_close", "finance", "Q1 books close", "2026-04-03", "2026-04-04"),
    _ev("book_club", "book_club", "Book Club", "2026-01-29T18:30", "20:00",
        recurrence=["RRULE:FREQ=MONTHLY;BYDAY=-1TH"], location="The Reading Room"),
    _ev("design_review", "design_reviews", "Design review", "2026-01-08T13:00", "14:00",
        recurrence=[WEEKLY + "TH"], attendees=[AK, A, B]),
    _ev("globex_checkin", "globex_partnership", "Acme/Globex weekly check-in",
        "2026-01-07T16:00", "16:45", recurrence=[WEEKLY + "WE"], attendees=[AR, A, E]),
    _ev("contract_renewal", "globex_partnership", "Contract renewal deadline",
        "2026-03-31", "2026-04-01"),
    _ev("roadmap_workshop", "globex_partnership", "Joint roadmap workshop",
        "2026-03-17T15:00", "17:00", attendees=[AR, A, E, F]),
    _ev("pipeline_review", "globex_sales", "Pipeline review", "2026-01-05T09:00", "10:00",
        recurrence=[WEEKLY + "MO"], attendees=[E, F, AR]),
    _ev("qbr_prep", "globex_sales", "QBR prep", "2026-03-12T14:00", "15:00"),
    _ev("offsite_day1", "globex_offsite", "Offsite: Day 1", "2026-04-14", "2026-04-15"),
    _ev("offsite_day2", "globex_offsite", "Offsite: Day 2", "2026-04-15", "2026-04-16"),
    _ev("offsite_dinner", "globex_offsite", "Offsite dinner", "2026-04-14T19:00", "22:00",
        location="Shibuya"),
    _ev("bob_dentist", B, "Dentist", "2026-03-05T15:00", "16:00", visibility="private"),
    _ev("bob_errand", B, "Personal errand", "2026-03-11T12:00", "13:30", visibility="private"),
    _ev("code_review", B, "Code review session", "2026-03-04T14:00", "15:00", attendees=[B, AK]),
    _ev("agency_call", C, "Agency call", "2026-03-05T14:00", "15:00"),
    _ev("carol_flight", C, "Flight LHR → JFK", "2026-03-24T11:00", "19:00",
        end_time_zone="America/New_York", location="Heathrow T5"),
    _ev("two_alexes", AK, "Design sync: Alex & Alex", "2026-03-06T09:00", "09:30",
        attendees=[AK, AR]),
    _ev("partner_summit", AR, "Partner summit", "2026-03-18T10:00", "12:00", attendees=[AR, E, F]),
    _ev("month_end", D, "Month-end close", "2026-03-31T09:00", "17:00"),
    _ev("initech_call", E, "Client call: Initech", "2026-03-10T16:00", "17:00"),
    _ev("tokyo_workshop", F, "Customer workshop", "2026-03-12T10:00", "12:00"),
]
# fmt: on

# master key, original local start, changes (status cancelled or new times)
_EXCEPTIONS: list[tuple[str, str, dict[str, Any]]] = [
    ("one_on_one", "2026-02-16T10:00:00", {"status": "cancelled"}),
    (
        "one_on_one",
        "2026-03-23T10:00:00",
        {"start": "2026-03-23T11:00:00", "end": "2026-03-23T11:30:00"},
    ),
]

_FILLER_TITLES: dict[str, list[str]] = {
    "acme": [
        "Project sync",
        "Customer call",
        "Architecture review",
        "Coffee chat",
        "Roadmap review",
        "Vendor demo",
        "Budget check-in",
        "Team lunch",
        "Office hours",
        "Incident review",
        "Onboarding session",
        "Planning poker",
    ],
    "globex": [
        "Prospect call",
        "Deal review",
        "Partner sync",
        "Proposal writing",
        "Demo rehearsal",
        "Account planning",
        "Territory review",
    ],
    "room": [
        "Booked: interview",
        "Booked: workshop",
        "Booked: all-hands prep",
        "Booked: customer demo",
    ],
}
_PEOPLE = {"acme": [A, B, C, AK, D], "globex": [AR, E, F]}


def _filler() -> list[dict[str, Any]]:
    rng = random.Random(f"calendar-gym-world-{WORLD_VERSION}")
    first = date(2026, 2, 2)
    plan = [(u, "acme", 10) for u in _PEOPLE["acme"]] + [
        (u, "globex", 10) for u in _PEOPLE["globex"]
    ]
    plan += [("boardroom", "room", 6), ("focus_room", "room", 5)]
    out: list[dict[str, Any]] = []
    for cal, kind, count in plan:
        for n in range(count):
            day = first + timedelta(days=rng.randrange(0, 75))
            while day.weekday() >= 5:
                day += timedelta(days=1)
            hour, minute = rng.randrange(9, 17), rng.choice((0, 30))
            length = rng.choice((30, 30, 60, 60, 90))
            start = f"{day.isoformat()}T{hour:02d}:{minute:02d}:00"
            end_minutes = hour * 60 + minute + length
            end = f"{day.isoformat()}T{end_minutes // 60:02d}:{end_minutes % 60:02d}:00"
            title = rng.choice(_FILLER_TITLES[kind])
            owner = cal if "@" in cal else A
            pool = _PEOPLE.get(kind, _PEOPLE["acme"])
            guests = sorted({owner, *rng.sample(pool, k=rng.randrange(0, 3))})
            out.append(
                {
                    "key": f"filler_{cal.split('@')[0]}_{n}",
                    "calendar": _c(cal),
                    "summary": title,
                    "start": start,
                    "end": end,
                    "attendees": guests if len(guests) > 1 else [],
                    "organizer": owner,
                }
            )
    return out


EVENT_IDS: dict[str, str] = {e["key"]: event_id(e["key"]) for e in _NAMED}
"""Stable ids of the named seed events, by key (re-exported by `seed_world`)."""


def seed_events() -> list[dict[str, Any]]:
    """Every seed event (masters, exceptions, single events) in the loader's format."""
    events = [dict(e) for e in _NAMED]
    by_key = {e["key"]: e for e in events}
    for master_key, original, changes in _EXCEPTIONS:
        master = by_key[master_key]
        length = datetime.fromisoformat(master["end"]) - datetime.fromisoformat(master["start"])
        moved = {"start": original, "end": (datetime.fromisoformat(original) + length).isoformat()}
        events.append(
            {
                **master,
                **moved,
                **changes,
                "key": None,
                "recurrence": None,
                "recurring_event": master_key,
                "original_start": original,
            }
        )
    events += _filler()
    for e in events:
        if e.get("key"):
            e["id"] = event_id(e["key"])
    return events
