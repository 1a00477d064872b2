"""Every error code of the spec from a realistic bad call, all problems at once, and error modes."""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym import CALENDAR_IDS, CODES, EVENT_IDS, CalendarEnv
from helpers.cal import Caller
from mcpgym.errors import InvalidRequest

WHEN = {
    "start": {"dateTime": "2026-03-05T10:00:00-05:00"},
    "end": {"dateTime": "2026-03-05T11:00:00-05:00"},
}
SPEC_KEYS = {
    "code", "category", "http_status", "tool", "field", "message", "expected", "got", "hint",
    "example", "retryable", "errors",
}  # fmt: skip


def check(error: dict[str, Any], code: str, field: str | None) -> dict[str, Any]:
    """The shared assertions: spec keys present, code and field right, hint non-empty."""
    assert set(error) >= SPEC_KEYS, SPEC_KEYS - set(error)
    assert (error["code"], error["field"]) == (code, field)
    info = CODES[code]
    assert (error["category"], error["http_status"]) == (info.category, info.http_status)
    assert error["retryable"] is info.retryable
    assert error["hint"] and error["message"] and error["expected"] is not None
    return error


def test_missing_required_field(call: Caller) -> None:
    error = check(
        call.fail("events_insert", summary="Sync", **WHEN), "MISSING_REQUIRED_FIELD", "calendarId"
    )
    assert error["got"] is None
    assert "'primary'" in error["hint"]
    assert error["tool"] == "events_insert"


def test_type_mismatch(call: Caller) -> None:
    error = check(
        call.fail("events_list", calendarId="primary", maxResults="ten"),
        "TYPE_MISMATCH",
        "maxResults",
    )
    assert "integer" in error["expected"] and error["got"] == "ten"
    error = check(
        call.fail("events_insert", calendarId="primary", attendees=["bob@acme.test"], **WHEN),
        "TYPE_MISMATCH",
        "attendees[0]",
    )
    assert error["example"] == {"attendees": [{"email": "bob@acme.test"}]}
    error = check(
        call.fail("events_insert", calendarId="primary", start="2026-03-05T10:00:00-05:00",
                  end=WHEN["end"]),
        "TYPE_MISMATCH",
        "start",
    )  # fmt: skip
    assert error["example"] == {"start": {"dateTime": "2026-03-05T10:00:00-05:00"}}


def test_invalid_enum(call: Caller) -> None:
    error = check(
        call.fail("acl_insert", calendarId="primary", role="editor",
                  scope={"type": "user", "value": "bob@acme.test"}),
        "INVALID_ENUM",
        "role",
    )  # fmt: skip
    assert error["expected"] == ["none", "freeBusyReader", "reader", "writerWithoutPrivateAccess",
                                 "writer", "owner"]  # fmt: skip
    assert error["got"] == "editor"
    error = check(
        call.fail("events_insert", calendarId="primary", visibility="Private", **WHEN),
        "INVALID_ENUM",
        "visibility",
    )
    assert error["suggestion"] == "private" and "'private'" in error["hint"]


def test_unknown_field_with_did_you_mean(call: Caller) -> None:
    error = check(
        call.fail("events_insert", calendarId="primary", title="Sync", **WHEN),
        "UNKNOWN_FIELD",
        "title",
    )
    assert error["suggestion"] == "summary" and "summary" in error["hint"]
    assert error["got"] == "Sync" and "summary" in error["expected"]
    assert error["example"] == {"summary": "Sync"}
    nested = check(
        call.fail("events_insert", calendarId="primary", summary="x",
                  start={"datetime": "2026-03-05T10:00:00-05:00"}, end=WHEN["end"]),
        "UNKNOWN_FIELD",
        "start.datetime",
    )  # fmt: skip
    assert nested["suggestion"] == "start.dateTime"
    assert call.fail("events_list", calendar_id="primary")["suggestion"] == "calendarId"


def test_invalid_format_matches_the_spec_example(call: Caller) -> None:
    error = check(
        call.fail(
            "events_insert",
            calendarId="primary",
            summary="Sync",
            start={"dateTime": "2026-03-05 10:00"},
            end=WHEN["end"],
        ),
        "INVALID_FORMAT",
        "start.dateTime",
    )
    assert error["message"] == (
        "start.dateTime must be RFC 3339 with an offset, or be paired with start.timeZone."
    )
    assert error["expected"] == "RFC 3339 date-time, e.g. 2026-03-05T10:00:00-05:00"
    assert error["got"] == "2026-03-05 10:00"
    assert error["hint"] == "Add the offset for America/New_York (-05:00) or set start.timeZone."
    assert error["example"] == {"start": {"dateTime": "2026-03-05T10:00:00-05:00"}}


@pytest.mark.parametrize(
    ("args", "field", "in_hint"),
    [
        ({"attendees": [{"email": "Bob"}]}, "attendees[0].email", "directory_search"),
        ({"recurrence": ["FREQ=WEEKLY;BYDAY=MO"]}, "recurrence[0]", "RRULE:FREQ=WEEKLY"),
        ({"recurrence": ["RRULE:FREQ=WEEKLY;BYDAYS=MO"]}, "recurrence[0]", "BYDAY"),
        ({"start": {"dateTime": "2026-03-05T10:00:00", "timeZone": "Eastern Time"},
          "end": {"dateTime": "2026-03-05T11:00:00", "timeZone": "America/New_York"}},
         "start.timeZone", "America/New_York"),
        ({"start": {"dateTime": "2026-03-05"}, "end": {"dateTime": "2026-03-06"}},
         "start.dateTime", "start.date"),
    ],
)  # fmt: skip
def test_invalid_format_of_emails_rrules_zones_and_dates(
    call: Caller, args: dict[str, Any], field: str, in_hint: str
) -> None:
    error = call.fail("events_insert", calendarId="primary", **{**WHEN, **args})
    check(error, "INVALID_FORMAT", field)
    assert in_hint in error["hint"] + str(error.get("example"))


def test_invalid_value(call: Caller) -> None:
    error = check(
        call.fail(
            "events_insert",
            calendarId="primary",
            start={"dateTime": "2026-03-05T10:00:00-05:00"},
            end={"dateTime": "2026-03-05T09:00:00-05:00"},
        ),
        "INVALID_VALUE",
        "end.dateTime",
    )
    assert error["got"] == "2026-03-05T09:00:00-05:00"
    assert error["example"] == {"end": {"dateTime": "2026-03-05T11:00:00-05:00"}}
    check(
        call.fail("events_list", calendarId="primary", orderBy="startTime"),
        "INVALID_VALUE",
        "orderBy",
    )


def test_not_found_hints_which_list_tool_to_call(call: Caller) -> None:
    error = check(
        call.fail("events_get", calendarId="primary", eventId="abc123nothere"),
        "NOT_FOUND",
        "eventId",
    )
    assert "events_list" in error["hint"] and error["got"] == "abc123nothere"
    error = check(call.fail("events_list", calendarId="Marketing"), "NOT_FOUND", "calendarId")
    assert CALENDAR_IDS["marketing"] in error["hint"]
    assert CALENDAR_IDS["marketing_archive"] in error["hint"]  # both near-duplicates offered
    error = check(
        call.fail("calendars_get", calendarId="nobody@nowhere.test"), "NOT_FOUND", "calendarId"
    )
    assert "calendarList_list" in error["hint"]
    error = check(
        call.fail("events_get", calendarId="primary", eventId=EVENT_IDS["team_sync_eng"]),
        "NOT_FOUND",
        "eventId",
    )
    assert CALENDAR_IDS["engineering"] in error["hint"]  # it lives on another calendar


def test_permission_denied_with_role_detail(session: Any) -> None:
    _, bob = session(user="bob@acme.test")
    error = check(
        bob.fail("events_insert", calendarId=CALENDAR_IDS["marketing"], summary="x", **WHEN),
        "PERMISSION_DENIED",
        "calendarId",
    )
    assert (error["required_role"], error["current_role"]) == ("writer", "reader")
    assert (error["expected"], error["got"]) == ("writer role or higher", "reader")
    assert "carol@acme.test" in error["remediation"] and error["hint"] == error["remediation"]


def test_insufficient_scope(session: Any) -> None:
    _, call = session(scopes=["calendar.readonly"])
    error = check(call.fail("calendars_insert", summary="New"), "INSUFFICIENT_SCOPE", None)
    assert error["granted_scopes"] == ["https://www.googleapis.com/auth/calendar.readonly"]
    assert "https://www.googleapis.com/auth/calendar" in error["required_scopes"]


def test_forbidden_operation(call: Caller) -> None:
    error = check(
        call.fail("calendars_delete", calendarId="primary"), "FORBIDDEN_OPERATION", "calendarId"
    )
    assert "calendars_clear" in error["hint"]
    check(
        call.fail("calendarList_delete", calendarId="primary"), "FORBIDDEN_OPERATION", "calendarId"
    )
    error = call.fail("acl_delete", calendarId="primary", ruleId="user:alice@acme.test")
    check(error, "FORBIDDEN_OPERATION", "ruleId")


def test_conflict(call: Caller) -> None:
    call.ok("events_insert", calendarId="primary", id="offsite2026", summary="a", **WHEN)
    error = check(
        call.fail("events_insert", calendarId="primary", id="offsite2026", summary="b", **WHEN),
        "CONFLICT",
        "id",
    )
    assert error["got"] == "offsite2026"
    error = check(call.fail("calendarList_insert", id=CALENDAR_IDS["marketing"]), "CONFLICT", "id")
    assert "calendarList_patch" in error["hint"]


def test_unknown_tool_with_nearest_names(call: Caller) -> None:
    obs = call("create_event", summary="x")
    assert obs.error is not None and obs.error.error_type == "tool_not_found"
    error = check(obs.error.model_dump()["error"], "UNKNOWN_TOOL", "tool_name")
    assert error["suggestions"] == ["events_insert"] and error["got"] == "create_event"
    assert call.fail("share_calendar")["suggestions"][0] == "acl_insert"
    assert call.fail("events_lst")["suggestions"][0] == "events_list"


def test_internal(call: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    import calendar_gym.tools.misc

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(calendar_gym.tools.misc, "search", boom)
    error = check(call.fail("directory_search", query="bob"), "INTERNAL", None)
    assert "disk on fire" not in error["message"]  # internals are not leaked to the agent
    assert call.env.state.errors == 1


def test_all_field_errors_are_reported_at_once(call: Caller) -> None:
    error = call.fail(
        "events_insert",
        title="Sync",
        start={"dateTime": "2026-03-05 10:00"},
        end={"dateTime": "2026-03-05T11:00:00-05:00", "timeZone": "Mars/Olympus"},
        attendees=[{"email": "bob@acme.test"}, {"email": "carol"}],
        visibility="secret",
    )
    fields = [(e["code"], e["field"]) for e in error["errors"]]
    assert fields == [
        ("UNKNOWN_FIELD", "title"),
        ("MISSING_REQUIRED_FIELD", "calendarId"),
        ("INVALID_FORMAT", "start.dateTime"),
        ("INVALID_FORMAT", "end.timeZone"),
        ("INVALID_FORMAT", "attendees[1].email"),
        ("INVALID_ENUM", "visibility"),
    ]
    assert (error["code"], error["field"]) == ("UNKNOWN_FIELD", "title")
    assert error["message"].startswith("6 problems")
    for item in error["errors"]:
        assert {"code", "field", "message", "expected", "got", "hint"} <= set(item)
    single = call.fail("events_insert", calendarId="primary", title="x", **WHEN)
    assert single["errors"] == []


class TestErrorModes:
    def failure(self, mode: str) -> Any:
        env = CalendarEnv()
        env.reset(seed=1, user="bob@acme.test", error_mode=mode)
        obs = Caller(env)(
            "events_insert", calendarId=CALENDAR_IDS["marketing"], summary="x", **WHEN
        )
        assert obs.error is not None
        return obs.error

    def test_structured(self) -> None:
        err = self.failure("structured")
        assert err.error_type == "execution_error"
        assert err.model_dump()["error"]["code"] == "PERMISSION_DENIED"

    def test_google(self) -> None:
        err = self.failure("google")
        body = err.model_dump()["error"]
        assert body == {
            "code": 403,
            "message": "You need to have writer access to this calendar.",
            "errors": [
                {
                    "domain": "calendar",
                    "reason": "requiredAccessLevel",
                    "message": "You need to have writer access to this calendar.",
                }
            ],
            "status": "PERMISSION_DENIED",
        }
        assert err.message == body["message"]

    def test_plain(self) -> None:
        err = self.failure("plain")
        assert set(err.model_dump()) == {"error_type", "message"}
        assert "\n" not in err.message
        assert err.message.startswith("events_insert failed: You have reader access")

    @pytest.mark.parametrize("mode", ["structured", "google", "plain"])
    def test_validation_failure_in_every_mode(self, session: Any, mode: str) -> None:
        _, call = session(error_mode=mode)
        obs = call("events_insert", calendarId="primary", start={"dateTime": "2026-03-05 10:00"},
                   end=WHEN["end"])  # fmt: skip
        assert obs.error is not None and obs.error.error_type == "invalid_args"
        dumped = obs.error.model_dump()
        if mode == "structured":
            assert dumped["error"]["code"] == "INVALID_FORMAT"
        elif mode == "google":
            assert dumped["error"]["status"] == "INVALID_ARGUMENT"
            assert dumped["error"]["errors"][0]["location"] == "start.dateTime"
            assert "hint" not in dumped["error"]
        else:
            assert "start.dateTime" in dumped["message"] and "error" not in dumped


class TestResetOptions:
    @pytest.mark.parametrize(
        ("options", "match"),
        [
            ({"usr": "bob@acme.test"}, "unknown reset option"),
            ({"user": "nobody@acme.test"}, "not in the world"),
            ({"error_mode": "verbose"}, "error_mode"),
            ({"now": "2026-03-04 09:00"}, "invalid reset option"),
            ({"seed_patch": {"people": []}}, "unknown section"),
        ],
    )
    def test_bad_options_are_rejected(self, options: dict[str, Any], match: str) -> None:
        with pytest.raises(InvalidRequest, match=match):
            CalendarEnv().reset(**options)

    def test_calling_after_finish_is_forbidden(self, call: Caller) -> None:
        obs = call("finish", status="done", summary="all done")
        assert obs.done and call.env.state.finish_status == "done"
        assert call.fail("calendarList_list")["code"] == "FORBIDDEN_OPERATION"


class TestCorrections:
    """The hints carry the corrected value for the most common slips."""

    def test_local_time_without_seconds_but_with_zone(self, call: Caller) -> None:
        error = call.fail(
            "events_insert",
            calendarId="primary",
            start={"dateTime": "2026-03-05T10:00", "timeZone": "Europe/Berlin"},
            end={"dateTime": "2026-03-05T11:00:00", "timeZone": "Europe/Berlin"},
        )
        check(error, "INVALID_FORMAT", "start.dateTime")
        assert error["example"] == {
            "start": {"dateTime": "2026-03-05T10:00:00", "timeZone": "Europe/Berlin"}
        }

    def test_scope_given_as_an_email(self, call: Caller) -> None:
        error = call.fail("acl_insert", calendarId="primary", role="reader", scope="bob@acme.test")
        check(error, "TYPE_MISMATCH", "scope")
        assert error["example"] == {"scope": {"type": "user", "value": "bob@acme.test"}}

    def test_title_given_as_event_id(self, call: Caller) -> None:
        error = call.fail("events_get", calendarId="primary", eventId="Doctor appointment")
        check(error, "NOT_FOUND", "eventId")
        assert error["example"] == {"eventId": EVENT_IDS["doctor"]}  # the owner may see it

    def test_role_synonym(self, call: Caller) -> None:
        error = call.fail(
            "acl_insert", calendarId="primary", role="editor", scope={"type": "default"}
        )
        assert error["suggestion"] == "writer"


# Reasons of Google's Calendar errors guide (developers.google.com/calendar/api/guides/errors)
# and of Google's global error reasons; then those seen from the live calendar in public error
# reports but not on the guide (docs/calendar_gym.md, "Google error mode", says which is which).
DOCUMENTED = {"timeRangeEmpty", "notFound", "duplicate", "deleted", "backendError", "required",
              "invalid", "badRequest", "forbidden", "insufficientPermissions",
              "quotaExceeded"}  # fmt: skip
OBSERVED = {"requiredAccessLevel", "cannotChangeOwnAcl"}


def test_every_google_reason_is_documented_or_observed() -> None:
    assert {info.google_reason for info in CODES.values()} <= DOCUMENTED | OBSERVED


@pytest.mark.parametrize(
    ("user", "tool", "args", "http", "reason", "domain"),
    [
        ("alice@acme.test", "events_list", {"calendarId": "primary",
         "timeMin": "2026-03-05T00:00:00Z", "timeMax": "2026-03-04T00:00:00Z"},
         400, "timeRangeEmpty", "calendar"),
        ("alice@acme.test", "events_insert", {"calendarId": "primary", "start": WHEN["end"],
         "end": WHEN["start"]}, 400, "timeRangeEmpty", "calendar"),
        ("alice@acme.test", "acl_patch", {"calendarId": "primary",
         "ruleId": "user:alice@acme.test", "role": "reader"}, 403, "cannotChangeOwnAcl",
         "calendar"),
        ("bob@acme.test", "events_insert", {"calendarId": CALENDAR_IDS["marketing"], **WHEN},
         403, "requiredAccessLevel", "calendar"),
        ("alice@acme.test", "events_get", {"calendarId": "primary", "eventId": "nothere1"},
         404, "notFound", "global"),
        ("alice@acme.test", "events_insert", {"calendarId": "primary", "summary": 5, **WHEN},
         400, "invalid", "global"),
        ("alice@acme.test", "events_list", {}, 400, "required", "global"),
    ],
)  # fmt: skip
def test_google_mode_uses_googles_reasons(
    session: Any, user: str, tool: str, args: dict[str, Any], http: int, reason: str, domain: str
) -> None:
    _, call = session(user=user, error_mode="google")
    obs = call(tool, **args)
    assert obs.error is not None
    body = obs.error.model_dump()["error"]
    assert body["code"] == http
    assert (body["errors"][0]["reason"], body["errors"][0]["domain"]) == (reason, domain)
    assert reason in DOCUMENTED | OBSERVED


def test_deleting_twice_is_410_deleted_in_google_mode(session: Any) -> None:
    _, call = session(error_mode="google")
    made = call.ok("events_insert", calendarId="primary", **WHEN)
    call.ok("events_delete", calendarId="primary", eventId=made["id"])
    body = call("events_delete", calendarId="primary", eventId=made["id"]).error.model_dump()
    assert body["error"]["code"] == 410
    assert body["error"]["errors"][0]["reason"] == "deleted"
    assert body["error"]["message"] == "Resource has been deleted"
