"""The ACL matrix of the spec: every role x every way of granting it x every operation class.

A fresh calendar owned by Zed gets exactly one rule that gives Mia a role via her user, her group,
her domain or the default rule; Mia then tries each operation. No role → NOT_FOUND, a role below
the operation's minimum → PERMISSION_DENIED with the role detail, otherwise the call succeeds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from helpers.cal import Caller

ROLES = ["none", "freeBusyReader", "reader", "writer", "owner"]
RANK = {r: i for i, r in enumerate(ROLES)}
ME, OWNER, GROUP = "mia@acme.test", "zed@acme.test", "matrix-team@acme.test"
MATRIX = "matrix@group.calendar.google.com"
OTHER = "other@group.calendar.google.com"  # Mia is only a reader there
EVENT, MINE, PRIVATE = "evmtr00001", "evmtr00002", "evmtr00003"
GRANTS = {
    "user": f"user:{ME}",
    "group": f"group:{GROUP}",
    "domain": "domain:acme.test",
    "default": "default",
}
WHEN = {"start": "2026-03-05T10:00:00", "end": "2026-03-05T11:00:00"}
NEW = {
    "start": {"dateTime": "2026-03-06T10:00:00-05:00"},
    "end": {"dateTime": "2026-03-06T11:00:00-05:00"},
}


def world(
    scope: str | None, role: str, extra: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A seed patch: Zed's calendar with one rule for Mia (or none)."""
    acl = [{"calendar": OTHER, "scope": f"user:{ME}", "role": "reader"}]
    if scope is not None:
        acl.append({"calendar": MATRIX, "scope": scope, "role": role})
    return {
        "users": [
            {"email": ME, "name": "Mia Lund", "time_zone": "America/New_York"},
            {"email": OWNER, "name": "Zed Ortiz", "time_zone": "America/New_York"},
        ],
        "groups": [{"email": GROUP, "name": "Matrix Team", "members": [ME]}],
        "calendars": [
            {"id": MATRIX, "summary": "Matrix", "owner": OWNER},
            {"id": OTHER, "summary": "Other", "owner": OWNER},
        ],
        "acl": acl + (extra or []),
        "events": [
            {"calendar": MATRIX, "id": EVENT, "summary": "Planning", **WHEN},
            {"calendar": MATRIX, "id": PRIVATE, "summary": "Secret", "visibility": "private",
             "start": "2026-03-05T12:00:00", "end": "2026-03-05T13:00:00"},
            {"calendar": ME, "id": MINE, "summary": "Mine", **WHEN},
        ],
    }  # fmt: skip


def _freebusy(call: Caller) -> dict[str, Any] | None:
    result = call.ok(
        "freebusy_query",
        timeMin="2026-03-05T00:00:00-05:00",
        timeMax="2026-03-06T00:00:00-05:00",
        items=[{"id": MATRIX}],
    )
    entry = result["calendars"][MATRIX]
    if entry.get("errors"):
        return entry["errors"][0]
    assert entry["busy"], "the calendar's events should show as busy"
    return None


def _call(tool: str, **args: Any) -> Callable[[Caller], dict[str, Any] | None]:
    def run(call: Caller) -> dict[str, Any] | None:
        obs = call(tool, **args)
        return obs.error.model_dump()["error"] if obs.error is not None else None

    return run


# operation class → (minimum role, the call)
BOB = {"type": "user", "value": "bob@acme.test"}
OPERATIONS: dict[str, tuple[str, Callable[[Caller], dict[str, Any] | None]]] = {
    "freebusy": ("freeBusyReader", _freebusy),
    "calendar_get": ("freeBusyReader", _call("calendars_get", calendarId=MATRIX)),
    "events_list": ("reader", _call("events_list", calendarId=MATRIX)),
    "events_get": ("reader", _call("events_get", calendarId=MATRIX, eventId=EVENT)),
    "events_insert": ("writer", _call("events_insert", calendarId=MATRIX, **NEW)),
    "events_import": ("writer", _call("events_import", calendarId=MATRIX, iCalUID="x@ext", **NEW)),
    "events_patch": (
        "writer", _call("events_patch", calendarId=MATRIX, eventId=EVENT, summary="x"),
    ),
    "events_delete": ("writer", _call("events_delete", calendarId=MATRIX, eventId=EVENT)),
    "move_off": (
        "writer", _call("events_move", calendarId=MATRIX, eventId=EVENT, destination="primary"),
    ),
    "move_onto": (
        "writer", _call("events_move", calendarId="primary", eventId=MINE, destination=MATRIX),
    ),
    "acl_list": ("writer", _call("acl_list", calendarId=MATRIX)),  # v3: writers read the ACL
    "acl_insert": ("owner", _call("acl_insert", calendarId=MATRIX, role="reader", scope=BOB)),
    "calendars_patch": ("owner", _call("calendars_patch", calendarId=MATRIX, summary="Renamed")),
    "calendars_update": ("owner", _call("calendars_update", calendarId=MATRIX, summary="New")),
    "acl_update": ("owner", _call("acl_update", calendarId=MATRIX, ruleId=f"user:{OWNER}",
                                  role="owner", scope={"type": "user", "value": OWNER})),
    "calendars_delete": ("owner", _call("calendars_delete", calendarId=MATRIX)),
}  # fmt: skip


def expected(role: str, needed: str) -> str:
    if role == "none":
        return "NOT_FOUND"
    return "allowed" if RANK[role] >= RANK[needed] else "PERMISSION_DENIED"


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("via", sorted(GRANTS))
@pytest.mark.parametrize("role", ROLES)
def test_acl_matrix(session: Any, role: str, via: str, operation: str) -> None:
    _, call = session(user=ME, seed_patch=world(GRANTS[via], role))
    needed, run = OPERATIONS[operation]
    error = run(call)
    want = expected(role, needed)
    if want == "allowed":
        assert error is None, f"{role} via {via} should allow {operation}: {error}"
        return
    assert error is not None, f"{role} via {via} should not allow {operation}"
    assert error["code"] == want
    if want == "PERMISSION_DENIED":
        assert error["required_role"] == needed
        assert error["current_role"] == role
        assert error["remediation"] and error["hint"]
        assert error["http_status"] == 403
    else:
        assert "hint" in error and error["got"] in (MATRIX, None)


@pytest.mark.parametrize("operation", ["events_list", "events_insert", "acl_list", "freebusy"])
def test_no_rule_at_all_is_not_found(session: Any, operation: str) -> None:
    _, call = session(user=ME, seed_patch=world(None, "none"))
    error = OPERATIONS[operation][1](call)
    assert error is not None and error["code"] == "NOT_FOUND"


def test_effective_role_is_the_highest_matching_rule(session: Any) -> None:
    extra = [{"calendar": MATRIX, "scope": f"group:{GROUP}", "role": "writer"}]
    _, call = session(user=ME, seed_patch=world(f"user:{ME}", "reader", extra))
    call.ok("events_insert", calendarId=MATRIX, **NEW)
    extra = [{"calendar": MATRIX, "scope": "domain:acme.test", "role": "reader"}]
    _, call = session(user=ME, seed_patch=world(f"user:{ME}", "none", extra))
    assert call.ok("events_list", calendarId=MATRIX)["accessRole"] == "reader"


def test_moving_needs_writer_on_the_destination_too(session: Any) -> None:
    _, call = session(user=ME, seed_patch=world(f"user:{ME}", "writer"))
    error = call.fail("events_move", calendarId=MATRIX, eventId=EVENT, destination=OTHER)
    assert (error["code"], error["field"]) == ("PERMISSION_DENIED", "destination")
    assert (error["required_role"], error["current_role"]) == ("writer", "reader")


@pytest.mark.parametrize(
    ("role", "sees_details"), [("reader", False), ("writer", True), ("owner", True)]
)
def test_private_events_are_busy_only_below_writer(
    session: Any, role: str, sees_details: bool
) -> None:
    _, call = session(user=ME, seed_patch=world(f"user:{ME}", role))
    items = {e["id"]: e for e in call.ok("events_list", calendarId=MATRIX)["items"]}
    secret = items[PRIVATE]
    assert ("summary" in secret) is sees_details
    assert secret["start"]["dateTime"] == "2026-03-05T12:00:00-05:00"
    assert items[EVENT]["summary"] == "Planning"
    got = call.ok("events_get", calendarId=MATRIX, eventId=PRIVATE)
    assert ("summary" in got) is sees_details
    found = call.ok("events_list", calendarId=MATRIX, q="secret")["items"]
    assert bool(found) is sees_details  # readers cannot search private details


def test_seed_world_sharing(session: Any) -> None:
    """Alice reads Bob's primary (a user rule) but only sees Dana's free/busy (domain rule)."""
    _, alice = session()
    assert alice.ok("events_list", calendarId="bob@acme.test")["accessRole"] == "reader"
    error = alice.fail("events_list", calendarId="dana@acme.test")
    assert (error["code"], error["current_role"]) == ("PERMISSION_DENIED", "freeBusyReader")
    assert "freebusy_query" in error["remediation"]
    assert alice.fail("events_list", calendarId="frank@globex.test")["code"] == "NOT_FOUND"


class TestScopes:
    def test_read_only_token_cannot_write_but_reads(self, session: Any) -> None:
        _, call = session(scopes=["calendar.readonly"])
        call.ok("events_list", calendarId="primary")
        call.ok("calendarList_list")
        error = call.fail("events_insert", calendarId="primary", **NEW)
        assert error["code"] == "INSUFFICIENT_SCOPE"
        assert error["granted_scopes"] == ["https://www.googleapis.com/auth/calendar.readonly"]
        assert "https://www.googleapis.com/auth/calendar.events" in error["required_scopes"]
        assert (
            error["expected"] == error["required_scopes"]
            and error["got"] == error["granted_scopes"]
        )
        # The hint says how to get the access, never how to finish a task.
        assert "scope" in error["hint"] and "cannot_complete" not in error["hint"]

    def test_scopes_are_checked_before_acls_and_arguments(self, session: Any) -> None:
        _, call = session(scopes=["calendar.readonly"])
        error = call.fail("events_insert", calendarId="frank@globex.test", title="x")
        assert error["code"] == "INSUFFICIENT_SCOPE"

    def test_freebusy_only_token(self, session: Any) -> None:
        _, call = session(scopes=["calendar.freebusy"])
        call.ok(
            "freebusy_query",
            timeMin="2026-03-05T00:00:00Z",
            timeMax="2026-03-06T00:00:00Z",
            items=[{"id": "bob@acme.test"}],
        )
        assert call.fail("events_list", calendarId="primary")["code"] == "INSUFFICIENT_SCOPE"
        assert call.fail("acl_list", calendarId="primary")["code"] == "INSUFFICIENT_SCOPE"
        call.ok("finish", status="cannot_complete", summary="read-only token")

    def test_events_scope_cannot_share(self, session: Any) -> None:
        _, call = session(scopes=["calendar.events"])
        call.ok("events_insert", calendarId="primary", **NEW)
        error = call.fail(
            "acl_insert", calendarId="primary", role="reader", scope={"type": "default"}
        )
        assert error["code"] == "INSUFFICIENT_SCOPE"

    def test_unknown_scope_is_rejected_at_reset(self) -> None:
        from calendar_gym import CalendarEnv
        from mcpgym.errors import InvalidRequest

        with pytest.raises(InvalidRequest, match="unknown scope"):
            CalendarEnv().reset(scopes=["calendar.everything"])


# Which short scopes Google Calendar accepts per tool, restated from the API reference.
_READ_EVENTS = frozenset(
    {"calendar", "calendar.readonly", "calendar.events", "calendar.events.readonly"}
)
_LIST_READ = frozenset(
    {"calendar", "calendar.readonly", "calendar.calendarlist", "calendar.calendarlist.readonly"}
)
_CAL_READ = frozenset(
    {"calendar", "calendar.readonly", "calendar.calendars", "calendar.calendars.readonly"}
)
SCOPE_TABLE: dict[str, frozenset[str]] = {
    **dict.fromkeys(["events_list", "events_get", "events_instances"], _READ_EVENTS),
    **dict.fromkeys(
        [
            "events_insert",
            "events_import",
            "events_patch",
            "events_update",
            "events_delete",
            "events_move",
        ],
        frozenset({"calendar", "calendar.events"}),
    ),
    **dict.fromkeys(["calendarList_list", "calendarList_get"], _LIST_READ),
    **dict.fromkeys(
        ["calendarList_insert", "calendarList_patch", "calendarList_update", "calendarList_delete"],
        frozenset({"calendar", "calendar.calendarlist"}),
    ),
    "calendars_get": _CAL_READ,
    **dict.fromkeys(
        [
            "calendars_insert",
            "calendars_patch",
            "calendars_update",
            "calendars_delete",
            "calendars_clear",
        ],
        frozenset({"calendar", "calendar.calendars"}),
    ),
    **dict.fromkeys(
        ["acl_list", "acl_get"], frozenset({"calendar", "calendar.acls", "calendar.acls.readonly"})
    ),
    **dict.fromkeys(
        ["acl_insert", "acl_patch", "acl_update", "acl_delete"],
        frozenset({"calendar", "calendar.acls"}),
    ),
    "freebusy_query": _READ_EVENTS | frozenset({"calendar.freebusy"}),
    **dict.fromkeys(
        ["settings_list", "settings_get"],
        frozenset({"calendar", "calendar.readonly", "calendar.settings.readonly"}),
    ),
}
ALL_SCOPES = sorted(set().union(*SCOPE_TABLE.values()))


@pytest.mark.parametrize("scope", ALL_SCOPES)
def test_scope_matrix(session: Any, scope: str) -> None:
    """Every tool under every single-scope token: allowed, or INSUFFICIENT_SCOPE before anything."""
    _, call = session(scopes=[scope])
    for tool, accepted in SCOPE_TABLE.items():
        obs = call(tool)  # no arguments: the scope check must come before validation
        code = obs.error.model_dump()["error"]["code"] if obs.error is not None else None
        if scope in accepted:
            assert code != "INSUFFICIENT_SCOPE", (tool, scope)
        else:
            assert code == "INSUFFICIENT_SCOPE", (tool, scope, code)
    assert call("colors_get").error is None
    assert call("directory_search", query="alex").error is None
