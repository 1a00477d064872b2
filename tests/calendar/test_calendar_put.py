"""The PUT methods (`acl_update`, `calendarList_update`, `calendars_update`): full replacement
as v3 defines it, unlike their `_patch` siblings; required fields required; the same permission
rules (403 with role detail vs 404 without a role) in every error mode."""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym import CALENDAR_IDS, CODES
from calendar_gym.world.colors import CALENDAR_COLORS, calendar_color_for
from helpers.cal import Caller

HIRING = CALENDAR_IDS["hiring"]  # Alice owns it; Bob is a writer, Carol a reader
DANA = {"type": "user", "value": "dana@acme.test"}


class TestCalendarsUpdate:
    def test_replaces_what_patch_keeps(self, call: Caller) -> None:
        cal = call.ok(
            "calendars_insert", summary="Garden", description="Roses", location="Shed",
            timeZone="Europe/Paris",
        )  # fmt: skip
        patched = call.ok("calendars_patch", calendarId=cal["id"], summary="Garden club")
        assert (patched["description"], patched["location"]) == ("Roses", "Shed")
        assert patched["timeZone"] == "Europe/Paris"
        updated = call.ok("calendars_update", calendarId=cal["id"], summary="Allotment")
        assert updated["summary"] == "Allotment"
        assert "description" not in updated and "location" not in updated  # cleared
        assert updated["timeZone"] == "America/New_York"  # Alice's setting, as insert gives
        assert updated["etag"] != patched["etag"]
        assert call.ok("calendars_get", calendarId=cal["id"]) == updated
        full = call.ok(
            "calendars_update", calendarId=cal["id"], summary="Allotment", description="Beans",
            location="Plot 7", timeZone="Asia/Tokyo",
        )  # fmt: skip
        assert (full["description"], full["location"], full["timeZone"]) == (
            "Beans", "Plot 7", "Asia/Tokyo",
        )  # fmt: skip

    def test_summary_is_required(self, call: Caller) -> None:
        error = call.fail("calendars_update", calendarId="primary", description="x")
        assert (error["code"], error["field"]) == ("MISSING_REQUIRED_FIELD", "summary")
        empty = call.fail("calendars_update", calendarId="primary", summary="")
        assert (empty["code"], empty["field"]) == ("INVALID_VALUE", "summary")

    def test_bad_time_zone_is_a_format_error(self, call: Caller) -> None:
        error = call.fail("calendars_update", calendarId="primary", summary="A", timeZone="EST5")
        assert (error["code"], error["field"]) == ("INVALID_FORMAT", "timeZone")


class TestCalendarListUpdate:
    def test_replaces_the_entry(self, call: Caller) -> None:
        roadmap = CALENDAR_IDS["q2_planning"]  # Alice's entry overrides the name: "Roadmap"
        patched = call.ok("calendarList_patch", calendarId=roadmap, colorId="7", hidden=True,
                          defaultReminders=[{"method": "popup", "minutes": 10}])  # fmt: skip
        assert patched["summaryOverride"] == "Roadmap" and patched["hidden"] is True
        updated = call.ok("calendarList_update", calendarId=roadmap, selected=True)
        default = calendar_color_for(roadmap)
        assert "summaryOverride" not in updated and "hidden" not in updated
        assert updated["colorId"] == default
        assert updated["backgroundColor"] == CALENDAR_COLORS[default]["background"]
        assert updated["defaultReminders"] == [] and updated["selected"] is True
        bare = call.ok("calendarList_update", calendarId=roadmap)
        assert bare["selected"] is False  # the discovery document's default
        full = call.ok(
            "calendarList_update", calendarId=roadmap, summaryOverride="Plan", colorId="3",
            hidden=True, selected=True, defaultReminders=[{"method": "email", "minutes": 30}],
        )  # fmt: skip
        assert (full["summaryOverride"], full["colorId"], full["hidden"]) == ("Plan", "3", True)
        assert full["defaultReminders"] == [{"method": "email", "minutes": 30}]
        assert call.ok("calendarList_get", calendarId=roadmap) == full

    def test_works_with_any_role_but_only_for_listed_calendars(self, session: Any) -> None:
        _, carol = session(user="carol@acme.test")  # a reader of Hiring, in her list
        entry = carol.ok("calendarList_update", calendarId=HIRING, summaryOverride="Jobs")
        assert (entry["accessRole"], entry["summaryOverride"]) == ("reader", "Jobs")
        error = carol.fail("calendarList_update", calendarId=CALENDAR_IDS["globex_offsite"])
        assert (error["code"], error["field"]) == ("NOT_FOUND", "calendarId")

    def test_bad_color_is_an_enum_error(self, call: Caller) -> None:
        error = call.fail("calendarList_update", calendarId="primary", colorId="99")
        assert (error["code"], error["field"]) == ("INVALID_ENUM", "colorId")


class TestAclUpdate:
    def test_replaces_the_role(self, call: Caller) -> None:
        call.ok("acl_insert", calendarId=HIRING, role="reader", scope=DANA)
        rule = call.ok(
            "acl_update", calendarId=HIRING, ruleId="user:dana@acme.test", role="writer",
            scope=DANA, sendNotifications=False,
        )  # fmt: skip
        assert (rule["id"], rule["role"], rule["scope"]) == ("user:dana@acme.test", "writer", DANA)
        assert call.ok("acl_get", calendarId=HIRING, ruleId=rule["id"]) == rule

    @pytest.mark.parametrize("missing", ["role", "scope"])
    def test_role_and_scope_are_required(self, call: Caller, missing: str) -> None:
        args = {"role": "writer", "scope": {"type": "user", "value": "bob@acme.test"}}
        del args[missing]
        error = call.fail("acl_update", calendarId=HIRING, ruleId="user:bob@acme.test", **args)
        assert (error["code"], error["field"]) == ("MISSING_REQUIRED_FIELD", missing)

    def test_the_scope_cannot_change(self, call: Caller) -> None:
        error = call.fail(
            "acl_update", calendarId=HIRING, ruleId="user:bob@acme.test", role="reader",
            scope=DANA,
        )  # fmt: skip
        assert (error["code"], error["field"]) == ("FORBIDDEN_OPERATION", "scope")
        assert error["expected"] == {"type": "user", "value": "bob@acme.test"}
        assert "acl_insert" in error["hint"]

    def test_the_owner_rule_cannot_be_lowered(self, call: Caller) -> None:
        me = {"type": "user", "value": "alice@acme.test"}
        error = call.fail(
            "acl_update", calendarId=HIRING, ruleId="user:alice@acme.test", role="writer", scope=me
        )
        assert (error["code"], error["field"]) == ("FORBIDDEN_OPERATION", "ruleId")

    def test_unknown_rule_is_not_found_with_a_suggestion(self, call: Caller) -> None:
        error = call.fail(
            "acl_update", calendarId=HIRING, ruleId="bob@acme.test", role="reader",
            scope={"type": "user", "value": "bob@acme.test"},
        )  # fmt: skip
        assert (error["code"], error["suggestion"]) == ("NOT_FOUND", "user:bob@acme.test")


# -- the same permission rules as the _patch siblings, in every error mode -------------------

BOB_RULE = {"ruleId": "user:bob@acme.test", "scope": {"type": "user", "value": "bob@acme.test"}}
PUTS: dict[str, dict[str, Any]] = {
    "acl_update": {"calendarId": HIRING, "role": "reader", **BOB_RULE},
    "calendars_update": {"calendarId": HIRING, "summary": "Renamed"},
}
PATCHES: dict[str, dict[str, Any]] = {
    "acl_patch": {"calendarId": HIRING, "role": "reader", **BOB_RULE},
    "calendars_patch": {"calendarId": HIRING, "summary": "Renamed"},
}


@pytest.mark.parametrize("mode", ["structured", "google", "plain"])
@pytest.mark.parametrize("tool", sorted(PUTS))
def test_writer_gets_403_and_stranger_404_like_patch(session: Any, tool: str, mode: str) -> None:
    """Bob (writer of Hiring) is refused with 403 as the `_patch` sibling refuses him; Frank
    (no role) gets 404; the rendering follows the error mode."""
    sibling = tool.replace("_update", "_patch")
    for user, code in (("bob@acme.test", "PERMISSION_DENIED"), ("frank@globex.test", "NOT_FOUND")):
        env, call = session(user=user, error_mode=mode)
        put, patch = call(tool, **PUTS[tool]), call(sibling, **PATCHES[sibling])
        assert put.error is not None and patch.error is not None
        ours, theirs = put.error.model_dump(), patch.error.model_dump()
        assert put.error.error_type == patch.error.error_type == "execution_error"
        if mode == "structured":
            assert ours["error"]["code"] == theirs["error"]["code"] == code
            assert ours["error"]["tool"] == tool
            if code == "PERMISSION_DENIED":
                assert ours["error"]["required_role"] == "owner"
                assert ours["error"]["current_role"] == "writer"
                assert "finish" not in ours["error"]["remediation"]
        elif mode == "google":
            assert ours["error"]["code"] == CODES[code].http_status
            assert ours["error"]["status"] == theirs["error"]["status"] == CODES[code].google_status
            assert ours["error"]["errors"][0]["reason"] == CODES[code].google_reason
            assert "hint" not in ours["error"]
        else:
            assert set(ours) == {"error_type", "message"}
            assert ours["message"].startswith(f"{tool} failed: ")
            assert ours["message"].removeprefix(f"{tool} failed: ") == theirs[
                "message"
            ].removeprefix(f"{sibling} failed: ")
        assert env.state.writes == 0


@pytest.mark.parametrize("mode", ["structured", "google", "plain"])
@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("acl_update", {"calendarId": HIRING, **BOB_RULE}, "role"),
        ("calendarList_update", {"calendarId": HIRING, "hidden": "maybe"}, "hidden"),
        ("calendars_update", {"calendarId": HIRING}, "summary"),
    ],
)
def test_validation_errors_in_every_mode(
    session: Any, mode: str, tool: str, args: dict[str, Any], field: str
) -> None:
    _, call = session(error_mode=mode)
    obs = call(tool, **args)
    assert obs.error is not None and obs.error.error_type == "invalid_args"
    dumped = obs.error.model_dump()
    if mode == "structured":
        assert dumped["error"]["field"] == field and dumped["error"]["hint"]
    elif mode == "google":
        assert dumped["error"]["status"] == "INVALID_ARGUMENT"
        assert dumped["error"]["errors"][0]["location"] == field
    else:
        assert field in dumped["message"] and "error" not in dumped
