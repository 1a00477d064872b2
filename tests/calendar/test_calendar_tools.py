"""The tools one by one: calendar list, calendars, ACL, events, free/busy, settings, directory."""

from __future__ import annotations

from typing import Any

from calendar_gym import CALENDAR_IDS, EVENT_IDS
from helpers.cal import Caller

WHEN = {
    "start": {"dateTime": "2026-03-05T10:00:00-05:00"},
    "end": {"dateTime": "2026-03-05T11:00:00-05:00"},
}


class TestCalendarList:
    def test_list_shows_roles_overrides_and_hides_hidden(self, call: Caller) -> None:
        items = call.ok("calendarList_list")["items"]
        by_id = {i["id"]: i for i in items}
        assert items[0]["id"] == "alice@acme.test" and items[0]["primary"] is True
        roadmap = by_id[CALENDAR_IDS["q2_planning"]]
        assert (roadmap["summary"], roadmap["summaryOverride"]) == ("Q2 Planning", "Roadmap")
        assert by_id[CALENDAR_IDS["marketing"]]["accessRole"] == "writer"
        assert by_id["bob@acme.test"]["accessRole"] == "reader"
        assert CALENDAR_IDS["marketing_archive"] not in by_id  # hidden in Alice's list
        everything = call.ok("calendarList_list", showHidden=True)["items"]
        assert CALENDAR_IDS["marketing_archive"] in {i["id"] for i in everything}
        owned = call.ok("calendarList_list", minAccessRole="owner")["items"]
        assert all(i["accessRole"] == "owner" for i in owned) and len(owned) >= 6

    def test_pagination(self, call: Caller) -> None:
        first = call.ok("calendarList_list", maxResults=5, showHidden=True)
        second = call.ok(
            "calendarList_list", maxResults=5, pageToken=first["nextPageToken"], showHidden=True
        )
        assert len(first["items"]) == 5 and first["items"][0] != second["items"][0]
        assert call.fail("calendarList_list", pageToken="garbage")["code"] == "INVALID_VALUE"

    def test_insert_patch_get_delete(self, session: Any) -> None:
        _, call = session(user="carol@acme.test")
        offsite = CALENDAR_IDS["globex_offsite"]
        assert call.fail("calendarList_insert", id=offsite)["code"] == "NOT_FOUND"  # no role
        holidays = CALENDAR_IDS["holidays"]
        call.ok("calendarList_delete", calendarId=holidays)
        assert call.fail("calendarList_get", calendarId=holidays)["code"] == "NOT_FOUND"
        entry = call.ok("calendarList_insert", id=holidays, summaryOverride="Days off", colorId="7")
        assert (entry["summaryOverride"], entry["colorId"], entry["accessRole"]) == (
            "Days off",
            "7",
            "reader",
        )
        patched = call.ok(
            "calendarList_patch", calendarId=holidays, summaryOverride="", hidden=True
        )
        assert "summaryOverride" not in patched and patched["hidden"] is True
        assert call.ok("calendarList_get", calendarId=holidays)["hidden"] is True


class TestCalendars:
    def test_create_patch_delete(self, call: Caller) -> None:
        cal = call.ok("calendars_insert", summary="Garden club", timeZone="Europe/Paris")
        assert (
            cal["id"].endswith("@group.calendar.google.com") and cal["timeZone"] == "Europe/Paris"
        )
        assert call.ok("calendarList_get", calendarId=cal["id"])["accessRole"] == "owner"
        assert (
            call.ok("calendars_patch", calendarId=cal["id"], description="Roses")["description"]
            == "Roses"
        )
        call.ok("calendars_delete", calendarId=cal["id"])
        assert call.fail("calendars_get", calendarId=cal["id"])["code"] == "NOT_FOUND"
        assert cal["id"] not in {c["id"] for c in call.ok("calendarList_list")["items"]}

    def test_clear_primary(self, call: Caller) -> None:
        count = call.ok("calendars_clear", calendarId="primary")["cancelledEvents"]
        assert count > 5
        left = call.ok("events_list", calendarId="primary", singleEvents=True, maxResults=250)
        # what stays are the invitations' copies (suite v3): other organizers' events
        assert left["items"] and all(
            i["organizer"]["email"] != "alice@acme.test"
            and any(a["email"] == "alice@acme.test" and a.get("self") for a in i["attendees"])
            for i in left["items"]
        )
        error = call.fail("calendars_clear", calendarId=CALENDAR_IDS["hiring"])
        assert error["code"] == "FORBIDDEN_OPERATION"

    def test_get_with_any_role(self, call: Caller) -> None:
        got = call.ok("calendars_get", calendarId="dana@acme.test")  # freeBusyReader
        assert got["timeZone"] == "America/Chicago"


class TestAcl:
    def test_share_update_unshare(self, session: Any) -> None:
        _, call = session()
        hiring = CALENDAR_IDS["hiring"]
        rules = {r["id"]: r["role"] for r in call.ok("acl_list", calendarId=hiring)["items"]}
        assert rules == {
            "user:alice@acme.test": "owner", "user:bob@acme.test": "writer",
            "user:carol@acme.test": "reader",
        }  # fmt: skip
        rule = call.ok("acl_insert", calendarId=hiring, role="reader",
                       scope={"type": "user", "value": "Dana@acme.test"})  # fmt: skip
        assert rule == {**rule, "id": "user:dana@acme.test", "role": "reader"}
        assert (
            call.ok("acl_patch", calendarId=hiring, ruleId=rule["id"], role="writer")["role"]
            == "writer"
        )
        assert (
            call.ok("acl_get", calendarId=hiring, ruleId="user:dana@acme.test")["role"] == "writer"
        )
        error = call.fail("acl_get", calendarId=hiring, ruleId="dana@acme.test")
        assert error["code"] == "NOT_FOUND" and error["suggestion"] == "user:dana@acme.test"
        call.ok("acl_delete", calendarId=hiring, ruleId=rule["id"])
        assert call.fail("acl_get", calendarId=hiring, ruleId=rule["id"])["code"] == "NOT_FOUND"
        bad = call.fail(
            "acl_insert",
            calendarId=hiring,
            role="reader",
            scope={"type": "domain", "value": "bob@acme.test"},
        )
        assert (bad["code"], bad["field"]) == ("INVALID_FORMAT", "scope.value")
        missing = call.fail("acl_insert", calendarId=hiring, role="reader", scope={"type": "user"})
        assert (missing["code"], missing["field"]) == ("MISSING_REQUIRED_FIELD", "scope.value")

    def test_share_grants_access_in_the_same_world(self, session: Any) -> None:
        env, alice = session()
        personal = CALENDAR_IDS["personal"]
        alice.ok(
            "acl_insert",
            calendarId=personal,
            role="reader",
            scope={"type": "user", "value": "bob@acme.test"},
        )
        from calendar_gym.world.acl import effective_role

        assert effective_role(env.store, "bob@acme.test", personal) == "reader"
        row = env.store.one(
            "SELECT 1 FROM calendar_list WHERE user_email = 'bob@acme.test' AND calendar_id = ?",
            (personal,),
        )
        assert row is not None  # it appears in Bob's calendar list


class TestEvents:
    def test_insert_get_update_patch(self, call: Caller) -> None:
        created = call.ok(
            "events_insert",
            calendarId="primary",
            summary="Design review",
            attendees=[{"email": "bob@acme.test"}, {"email": "erin@globex.test", "optional": True}],
            reminders={"useDefault": False, "overrides": [{"method": "popup", "minutes": 10}]},
            **WHEN,
        )
        assert created["organizer"] == {
            "email": "alice@acme.test",
            "displayName": "Alice Chen",
            "self": True,
        }
        assert [a["displayName"] for a in created["attendees"]] == ["Bob Martinez", "Erin Novak"]
        patched = call.ok(
            "events_patch", calendarId="primary", eventId=created["id"], location="Room 4"
        )
        assert (patched["summary"], patched["location"], patched["sequence"]) == (
            "Design review",
            "Room 4",
            1,
        )
        replaced = call.ok(
            "events_update", calendarId="primary", eventId=created["id"], summary="Review", **WHEN
        )
        assert "location" not in replaced and "attendees" not in replaced
        assert replaced["reminders"] == {"useDefault": True}

    def test_move_between_calendars(self, call: Caller) -> None:
        created = call.ok("events_insert", calendarId="primary", summary="Launch party", **WHEN)
        launches = CALENDAR_IDS["product_launches"]
        moved = call.ok(
            "events_move", calendarId="primary", eventId=created["id"], destination=launches
        )
        assert moved["organizer"]["email"] == launches
        assert (
            call.fail("events_get", calendarId="primary", eventId=created["id"])["code"]
            == "NOT_FOUND"
        )
        assert (
            call.ok("events_get", calendarId=launches, eventId=created["id"])["summary"]
            == "Launch party"
        )
        error = call.fail(
            "events_move",
            calendarId="primary",
            eventId=f"{EVENT_IDS['one_on_one']}_20260309T140000Z",
            destination=launches,
        )  # fmt: skip
        assert error["code"] == "FORBIDDEN_OPERATION"

    def test_list_search_order_and_window(self, call: Caller) -> None:
        listed = call.ok(
            "events_list",
            calendarId=CALENDAR_IDS["engineering"],
            timeMin="2026-03-09T00:00:00-04:00",
            timeMax="2026-03-16T00:00:00-04:00",
            singleEvents=True,
            orderBy="startTime",
        )
        titles = [e["summary"] for e in listed["items"]]
        assert titles == ["Sprint planning", "Team Sync", "Release 4.2 go/no-go"]
        assert listed["accessRole"] == "owner" and listed["timeZone"] == "America/New_York"
        found = call.ok("events_list", calendarId=CALENDAR_IDS["marketing"], q="team sync")["items"]
        assert [e["id"] for e in found] == [EVENT_IDS["team_sync_mkt"]]

    def test_near_duplicate_team_syncs_live_on_two_calendars(self, call: Caller) -> None:
        for key in ("engineering", "marketing"):
            items = call.ok("events_list", calendarId=CALENDAR_IDS[key], q="Team Sync")["items"]
            assert [e["summary"] for e in items] == ["Team Sync"]


class TestMisc:
    def test_freebusy_with_groups_and_errors(self, call: Caller) -> None:
        result = call.ok(
            "freebusy_query",
            timeMin="2026-03-10T00:00:00-04:00",
            timeMax="2026-03-11T00:00:00-04:00",
            timeZone="America/New_York",
            items=[{"id": "eng@acme.test"}, {"id": "frank@globex.test"}],
        )
        assert result["groups"]["eng@acme.test"]["calendars"] == [
            "alex.kim@acme.test", "alice@acme.test", "bob@acme.test",
        ]  # fmt: skip
        # Quarterly planning 13-15 merges with the Tuesday focus block 14-16
        assert {"start": "2026-03-10T13:00:00-04:00", "end": "2026-03-10T16:00:00-04:00"} in (
            result["calendars"]["alice@acme.test"]["busy"]
        )
        frank = result["calendars"]["frank@globex.test"]
        assert frank["busy"] == [] and frank["errors"][0]["reason"] == "notFound"
        assert frank["errors"][0]["code"] == "NOT_FOUND"

    def test_private_event_is_busy_in_freebusy(self, session: Any) -> None:
        _, bob = session(user="bob@acme.test")
        busy = bob.ok(
            "freebusy_query",
            timeMin="2026-03-05T00:00:00-05:00",
            timeMax="2026-03-06T00:00:00-05:00",
            items=[{"id": "alice@acme.test"}],
        )["calendars"]["alice@acme.test"]["busy"]
        assert {"start": "2026-03-05T13:00:00Z", "end": "2026-03-05T14:00:00Z"} in busy
        doctor = bob.ok("events_get", calendarId="alice@acme.test", eventId=EVENT_IDS["doctor"])
        assert "summary" not in doctor and doctor["visibility"] == "private"

    def test_settings_colors_directory(self, call: Caller) -> None:
        ids = [s["id"] for s in call.ok("settings_list")["items"]]
        assert {"timezone", "now", "weekStart", "locale"} <= set(ids)
        assert call.ok("settings_get", setting="now")["value"] == "2026-03-04T09:00:00-05:00"
        assert call.fail("settings_get", setting="timeZone")["suggestion"] == "timezone"
        colors = call.ok("colors_get")
        assert len(colors["calendar"]) == 24 and len(colors["event"]) == 11
        alexes = call.ok("directory_search", query="alex")["users"]
        assert [(u["name"], u["domain"]) for u in alexes] == [
            ("Alex Kim", "acme.test"), ("Alex Rivera", "globex.test"),
        ]  # fmt: skip
        groups = call.ok("directory_search", query="engineering")["groups"]
        assert groups[0]["email"] == "eng@acme.test"
        assert call.fail("directory_search", query="")["code"] == "INVALID_VALUE"
