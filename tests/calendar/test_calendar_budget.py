"""A per-call budget on recurrence expansion: no call can hold the server by expanding huge
series (issue 9's freeze: 30 FREQ=SECONDLY series, then one five-year singleEvents list). The
call gets a structured `RESULT_TOO_LARGE` saying how to narrow it, quickly, in every shape of
expanding call; ordinary calls are not affected."""

from __future__ import annotations

import time
from typing import Any

import pytest

from calendar_gym import CalendarEnv
from calendar_gym.events.query import CALL_BUDGET
from mcpgym import CallToolAction

NY = "America/New_York"  # suite v2: a recurring event names its zone
FIVE_YEARS = {"timeMin": "2026-01-01T00:00:00Z", "timeMax": "2031-01-01T00:00:00Z"}


def _call(env: CalendarEnv, tool: str, **args: Any) -> Any:
    return env.step(CallToolAction(tool_name=tool, arguments=args))


@pytest.fixture
def flooded() -> Any:
    env = CalendarEnv()
    env.reset()
    ids = []
    for i in range(30):
        obs = _call(env, "events_insert", calendarId="primary", summary=f"tick {i}",
                    start={"dateTime": f"2026-03-05T10:{i:02d}:00-05:00", "timeZone": NY},
                    end={"dateTime": f"2026-03-05T10:{i:02d}:01-05:00", "timeZone": NY},
                    recurrence=["RRULE:FREQ=SECONDLY"])  # fmt: skip
        assert obs.error is None, obs.error
        ids.append(obs.result["id"])
    yield env, ids
    env.close()


def _timed(env: CalendarEnv, tool: str, **args: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    obs = _call(env, tool, **args)
    return time.perf_counter() - t0, obs


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("events_list", {"calendarId": "primary", "singleEvents": True, **FIVE_YEARS}),
        ("events_list", {"calendarId": "primary", "singleEvents": True, "maxResults": 5}),
        ("events_list", {"calendarId": "primary", **FIVE_YEARS}),
        ("freebusy_query", {**FIVE_YEARS, "items": [{"id": "primary"}]}),
    ],
    ids=["five-year-single-events", "unbounded-single-events", "series-in-window", "freebusy"],
)
def test_expanding_calls_get_result_too_large_quickly(
    flooded: Any, tool: str, args: dict[str, Any]
) -> None:
    env, _ = flooded
    times = []
    for _ in range(3):  # the first call also generates the series; later ones hit the cache
        seconds, obs = _timed(env, tool, **args)
        times.append(seconds)
        assert obs.error is not None, f"{tool} answered {str(obs.result)[:200]}"
        error = obs.error.error
        assert error["code"] == "RESULT_TOO_LARGE" and error["http_status"] == 400
        assert "timeMin/timeMax" in error["hint"] and "maxResults" in error["hint"]
        assert error["example"]["timeMin"] and str(CALL_BUDGET) in error["message"]
    assert min(times) < 0.1, times  # well under 100 ms (min: the machine is shared)
    assert max(times) < 1.0, times


def test_a_narrow_window_on_the_same_series_still_answers(flooded: Any) -> None:
    env, ids = flooded
    obs = _call(env, "events_instances", calendarId="primary", eventId=ids[0],
                timeMin="2026-03-05T15:00:00Z", timeMax="2026-03-05T15:00:10Z")  # fmt: skip
    assert obs.error is None, obs.error
    assert len(obs.result["items"]) == 10


def test_listing_the_series_themselves_is_not_an_expansion(flooded: Any) -> None:
    env, ids = flooded
    obs = _call(env, "events_list", calendarId="primary", q="tick")
    assert obs.error is None and {e["id"] for e in obs.result["items"]} == set(ids)


def test_other_sessions_and_ordinary_calls_are_unaffected(flooded: Any) -> None:
    other = CalendarEnv()
    try:
        other.reset()
        seconds, obs = _timed(other, "events_list", calendarId="primary", singleEvents=True,
                              **FIVE_YEARS)  # fmt: skip
        assert obs.error is None and obs.result["items"]
        assert seconds < 1.0
    finally:
        other.close()


def test_the_google_and_plain_modes_render_it_too() -> None:
    tick = {"calendar": "alice@acme.test", "summary": "tick", "start": "2026-03-05T10:00:00",
            "end": "2026-03-05T10:00:01", "recurrence": ["RRULE:FREQ=SECONDLY"]}  # fmt: skip
    patch = {"events": [dict(tick, id=f"tick{i}") for i in range(2)]}
    for mode, check in (("google", "badRequest"), ("plain", "events_list failed")):
        env = CalendarEnv()
        try:
            env.reset(error_mode=mode, seed_patch=patch)
            obs = _call(env, "events_list", calendarId="primary", singleEvents=True, **FIVE_YEARS)
            assert obs.error is not None and check in str(obs.error.model_dump()), mode
        finally:
            env.close()
