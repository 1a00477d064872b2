"""Sessions: isolation under concurrency, determinism, shared worlds, the env contract."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from calendar_gym import CALENDAR_IDS, CalendarEnv, state_hash
from helpers.cal import Caller
from mcpgym import CallToolAction, CallToolObservation, ListToolsAction, check_env

WHEN = {
    "start": {"dateTime": "2026-03-05T10:00:00-05:00"},
    "end": {"dateTime": "2026-03-05T11:00:00-05:00"},
}
MARKETING = CALENDAR_IDS["marketing"]


async def _session(i: int, env: CalendarEnv) -> set[str]:
    await env.areset(seed=i, episode_id=f"s{i}")

    async def call(tool: str, **args: Any) -> Any:
        obs = await env.astep(CallToolAction(tool_name=tool, arguments=args))
        assert isinstance(obs, CallToolObservation) and obs.error is None, obs
        return obs.result

    mine = {f"session {i} private", f"session {i} shared"}
    await call("events_insert", calendarId="primary", summary=f"session {i} private", **WHEN)
    await call("events_insert", calendarId=MARKETING, summary=f"session {i} shared", **WHEN)
    await call("calendars_insert", summary=f"Calendar of session {i}")
    seen: set[str] = set()
    for cal in ("primary", MARKETING):
        listed = await call(
            "events_list",
            calendarId=cal,
            q="session",
            timeMin="2026-03-05T00:00:00-05:00",
            timeMax="2026-03-06T00:00:00-05:00",
        )
        seen |= {e["summary"] for e in listed["items"]}
    calendars = await call("calendarList_list")
    own = [c["summary"] for c in calendars["items"] if c["summary"].startswith("Calendar of")]
    assert own == [f"Calendar of session {i}"]
    assert seen == mine
    return seen


async def test_100_concurrent_sessions_do_not_see_each_other() -> None:
    envs = [CalendarEnv() for _ in range(100)]
    try:
        results = await asyncio.gather(*(_session(i, e) for i, e in enumerate(envs)))
        assert len({frozenset(r) for r in results}) == 100
        assert {e.state.writes for e in envs} == {3}
    finally:
        for e in envs:
            e.close()


class ThreadedCalendar(CalendarEnv):
    """The same environment with its calls pushed to worker threads."""

    blocking = True


async def test_concurrent_sessions_in_worker_threads() -> None:
    envs = [ThreadedCalendar() for _ in range(20)]
    try:
        await asyncio.gather(*(_session(i, e) for i, e in enumerate(envs)))
    finally:
        for e in envs:
            e.close()


def _history(env: CalendarEnv) -> None:
    call = Caller(env)
    event = call.ok("events_insert", calendarId="primary", summary="Budget", **WHEN)
    call.ok("events_patch", calendarId="primary", eventId=event["id"], location="Room 4")
    cal = call.ok("calendars_insert", summary="Side project")
    call.ok(
        "acl_insert",
        calendarId=cal["id"],
        role="reader",
        scope={"type": "user", "value": "bob@acme.test"},
    )
    call.fail("events_insert", calendarId="primary", title="oops", **WHEN)
    call.ok("events_delete", calendarId="primary", eventId=event["id"])


def test_same_seed_gives_byte_identical_state() -> None:
    dumps = []
    for _ in range(2):
        env = CalendarEnv()
        env.reset(seed=42)
        _history(env)
        dumps.append(env.state_dump())
        assert env.state_hash() == state_hash(dumps[-1])
        env.close()
    assert dumps[0] == dumps[1]
    other = CalendarEnv()
    other.reset(seed=43)
    _history(other)
    assert other.state_dump() != dumps[0]  # generated ids come from the seed
    json.loads(dumps[0])  # canonical JSON


def test_reset_restores_the_seed_world() -> None:
    env = CalendarEnv()
    env.reset(seed=5)
    fresh = env.state_hash()
    _history(env)
    assert env.state_hash() != fresh
    env.reset(seed=5)
    assert env.state_hash() == fresh
    assert env.state.calls == 0 and env.state.step_count == 0


def test_state_counts_calls_errors_and_writes() -> None:
    env = CalendarEnv()
    env.reset(seed=1, user="bob@acme.test", error_mode="google", now="2026-03-10T08:00:00-04:00")
    call = Caller(env)
    call.ok("calendarList_list")
    call("events_insert", calendarId=MARKETING, summary="x", **WHEN)
    call.ok("events_insert", calendarId="primary", summary="x", **WHEN)
    call.ok("finish", status="done", summary="booked")
    st = env.state
    assert (st.user, st.error_mode, st.now) == (
        "bob@acme.test",
        "google",
        "2026-03-10T08:00:00-04:00",
    )
    assert (st.calls, st.errors, st.writes, st.step_count) == (4, 1, 1, 4)
    assert (st.finish_status, st.finish_summary) == ("done", "booked")


def test_shared_world_makes_a_share_visible_to_the_grantee() -> None:
    alice, bob = CalendarEnv(), CalendarEnv()
    alice.reset(seed=3, user="alice@acme.test", shared_world="office")
    bob.reset(seed=3, user="bob@acme.test", shared_world="office")
    try:
        a, b = Caller(alice), Caller(bob)
        cal = a.ok("calendars_insert", summary="Launch war room")
        a.ok("events_insert", calendarId=cal["id"], summary="Go/no-go", **WHEN)
        assert b.fail("events_list", calendarId=cal["id"])["code"] == "NOT_FOUND"
        a.ok("acl_insert", calendarId=cal["id"], role="reader",
             scope={"type": "user", "value": "bob@acme.test"})  # fmt: skip
        listed = b.ok("events_list", calendarId=cal["id"])
        assert [e["summary"] for e in listed["items"]] == ["Go/no-go"]
        assert cal["id"] in {c["id"] for c in b.ok("calendarList_list")["items"]}
    finally:
        alice.close()
        bob.close()
    from calendar_gym.world.store import SHARED_WORLDS

    assert "office" not in SHARED_WORLDS  # released with its last session


def test_production_instances_share_one_world() -> None:
    alice, bob, carol = CalendarEnv(), CalendarEnv(), CalendarEnv()
    for env, user in ((alice, "alice@acme.test"), (bob, "bob@acme.test")):
        env.serving_mode = "production"
        env.reset(user=user, scopes=["calendar"])
    carol.reset(user="bob@acme.test")  # simulation: a private copy
    try:
        Caller(alice).ok("events_insert", calendarId="primary", summary="Shared?", **WHEN)
        seen = Caller(bob).ok("events_list", calendarId="alice@acme.test", q="Shared?")
        assert len(seen["items"]) == 1
        assert (
            Caller(carol).ok("events_list", calendarId="alice@acme.test", q="Shared?")["items"]
            == []
        )
        tools = {t.name for t in alice.step(ListToolsAction()).tools}  # type: ignore[attr-defined]
        assert "finish" not in tools and "events_insert" in tools
    finally:
        for env in (alice, bob, carol):
            env.close()


def test_check_env_passes() -> None:
    assert "check_unknown_tool_is_data" in check_env(CalendarEnv)


def test_the_tool_set_of_the_spec() -> None:
    names = set(CalendarEnv.tool_specs)
    assert names == {
        "calendarList_list", "calendarList_get", "calendarList_insert", "calendarList_patch",
        "calendarList_update", "calendarList_delete", "calendars_get", "calendars_insert",
        "calendars_patch", "calendars_update", "calendars_delete", "calendars_clear",
        "events_list", "events_get", "events_insert", "events_import", "events_patch",
        "events_update",
        "events_delete", "events_move", "events_instances", "acl_list", "acl_get", "acl_insert",
        "acl_patch", "acl_update", "acl_delete", "freebusy_query", "colors_get", "settings_list",
        "settings_get", "directory_search", "finish",
    }  # fmt: skip
    for spec in CalendarEnv.tool_specs.values():
        assert spec.description, spec.name
        assert spec.input_schema["additionalProperties"] is False


@pytest.mark.parametrize("n", [200])
def test_reset_is_fast(n: int) -> None:
    import time

    env = CalendarEnv()
    env.reset()
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        env.reset(seed=i)
        times.append(time.perf_counter() - t0)
    times.sort()
    assert times[n // 2] < 0.005, f"reset p50 {times[n // 2] * 1000:.2f} ms"
    env.close()
