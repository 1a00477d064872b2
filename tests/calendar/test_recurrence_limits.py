"""Recurrence rules that would hold the server, and values out of the calendar's range (issue 26,
defect 8: every call's cost bounded). dateutil never advances an `INTERVAL=0` rule (the server
was stuck until SIGKILL) and searches to the year 9999 for a rule whose BY parts match no day
(5-6 s holding the GIL at every expansion); such rules are refused at insert, quickly, as a
structured error naming the part, while every rule that can occur is still accepted. Dates
whose offset leaves the years 1-9999 are the caller's values, not an internal failure."""

from __future__ import annotations

import time
from typing import Any

import pytest

from helpers.cal import Caller

NY = "America/New_York"
WHEN = {
    "start": {"dateTime": "2026-03-02T10:00:00-05:00", "timeZone": NY},
    "end": {"dateTime": "2026-03-02T11:00:00-05:00", "timeZone": NY},
}
FIVE_YEARS = {"timeMin": "2026-01-01T00:00:00Z", "timeMax": "2031-01-01T00:00:00Z"}

REFUSED = [
    "RRULE:FREQ=DAILY;INTERVAL=0",  # never advances
    "RRULE:FREQ=WEEKLY;INTERVAL=-1",
    "RRULE:FREQ=DAILY;INTERVAL=100000",
    "RRULE:FREQ=DAILY;COUNT=0",
    "RRULE:FREQ=DAILY;COUNT=x",
    "RRULE:FREQ=SECONDLY;BYSECOND=61",  # dateutil raised TypeError while expanding
    "RRULE:FREQ=YEARLY;BYMONTH=13",
    "RRULE:FREQ=MONTHLY;BYMONTHDAY=0",
    "RRULE:FREQ=MONTHLY;BYMONTHDAY=32",
    "RRULE:FREQ=YEARLY;BYYEARDAY=367",
    "RRULE:FREQ=DAILY;BYSETPOS=0;BYDAY=MO",
    "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",  # match no day: a search to the year 9999
    "RRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30",
    "RRULE:FREQ=HOURLY;BYYEARDAY=366;BYMONTH=1",
    "RRULE:FREQ=MINUTELY;BYMONTH=4,6,9,11;BYMONTHDAY=31",
    "RRULE:FREQ=DAILY;BYWEEKNO=53;BYMONTH=6",
    "RRULE:FREQ=DAILY;INTERVAL=7;BYDAY=TU",  # the start's weekday only
]
ACCEPTED = [
    "RRULE:FREQ=MONTHLY;BYMONTHDAY=-1",
    "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
    "RRULE:FREQ=DAILY;BYYEARDAY=366;BYMONTH=12",
    "RRULE:FREQ=YEARLY;BYWEEKNO=53;BYMONTH=12",
    "RRULE:FREQ=YEARLY;BYWEEKNO=-1;BYMONTH=1",
    "RRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
    "RRULE:FREQ=MONTHLY;BYDAY=-1FR",
    "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;COUNT=10",
    "RRULE:FREQ=DAILY;INTERVAL=3",
]


def _insert(call: Caller, rule: str) -> tuple[float, Any]:
    t0 = time.perf_counter()
    obs = call("events_insert", calendarId="primary", summary="series", recurrence=[rule], **WHEN)
    return time.perf_counter() - t0, obs


@pytest.mark.parametrize("rule", REFUSED)
def test_a_rule_that_would_hold_the_server_is_refused_quickly(call: Caller, rule: str) -> None:
    seconds, obs = _insert(call, rule)
    assert obs.error is not None, rule
    error = obs.error.model_dump()
    assert "INTERNAL" not in str(error), error
    assert "recurrence" in str(error), error
    assert seconds < 0.5, (rule, seconds)


@pytest.mark.parametrize("rule", ACCEPTED)
def test_a_rule_that_can_occur_is_kept_and_expands_quickly(call: Caller, rule: str) -> None:
    _seconds, obs = _insert(call, rule)
    assert obs.error is None, (rule, obs.error)
    t0 = time.perf_counter()
    listed = call("events_list", calendarId="primary", singleEvents=True, **FIVE_YEARS)
    assert listed.error is None, listed.error
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("events_insert", {"calendarId": "primary", "summary": "x",
                           "start": {"dateTime": "0001-01-01T00:00:00+23:59"},
                           "end": {"dateTime": "0001-01-01T01:00:00+23:59"}}),
        ("events_list", {"calendarId": "primary", "singleEvents": True,
                         "timeMin": "9999-12-31T00:00:00-23:59",
                         "timeMax": "9999-12-31T23:00:00-23:59"}),
        ("freebusy_query", {"timeMin": "0001-01-01T00:00:00Z",
                            "timeMax": "9999-12-31T00:00:00Z", "items": [{"id": "primary"}]}),
    ],
)  # fmt: skip
def test_dates_out_of_range_are_the_callers_values(
    call: Caller, tool: str, args: dict[str, Any]
) -> None:
    obs = call(tool, **args)
    if obs.error is not None:  # refused as the caller's value, never "failed internally"
        assert "INTERNAL" not in str(obs.error.model_dump()), obs.error
    listed = call("events_list", calendarId="primary")
    assert listed.error is None and all(e["summary"] != "x" for e in listed.result["items"])


@pytest.mark.parametrize("tool", ["events_get", "events_instances", "events_delete"])
def test_an_id_too_long_for_any_calendar_is_the_callers_value(call: Caller, tool: str) -> None:
    """A 100k-character eventId reached SQLite and came back "failed internally"."""
    obs = call(tool, calendarId="primary", eventId="a" * 100_000)
    assert obs.error is not None
    error = str(obs.error.model_dump())
    assert "INTERNAL" not in error and "INVALID_VALUE" in error, error[:300]
