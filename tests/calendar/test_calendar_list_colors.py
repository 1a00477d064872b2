"""Calendar-list colors keep one color: `colorId` and the RGB pair never disagree after a write.

Google writes `backgroundColor`/`foregroundColor` only with `colorRgbFormat=true` (then `colorId`
becomes the closest palette color); otherwise `colorId` decides both. An agent that reads an
entry, changes `colorId` and sends the body back must get the new color, not a row whose RGB
still shows the old one; an RGB value that would be dropped is refused, naming the flag.
"""

from __future__ import annotations

from typing import Any

import pytest

from calendar_gym import CALENDAR_IDS
from calendar_gym.world.colors import CALENDAR_COLORS, nearest_calendar_color
from helpers.cal import Caller

MARKETING = CALENDAR_IDS["marketing"]
WRITABLE = ("colorId", "backgroundColor", "foregroundColor", "summaryOverride", "hidden",
            "selected", "defaultReminders")  # fmt: skip


def colors(entry: dict[str, Any]) -> tuple[str, str, str]:
    return entry["colorId"], entry["backgroundColor"], entry["foregroundColor"]


def palette(color_id: str) -> tuple[str, str, str]:
    return (
        color_id,
        CALENDAR_COLORS[color_id]["background"],
        CALENDAR_COLORS[color_id]["foreground"],
    )


def round_trip(call: Caller, **changes: Any) -> dict[str, Any]:
    """The entry as `calendarList_get` gives it, its writable fields only, with `changes`."""
    entry = call.ok("calendarList_get", calendarId=MARKETING)
    return {k: v for k, v in entry.items() if k in WRITABLE} | changes


@pytest.mark.parametrize("tool", ["calendarList_patch", "calendarList_update"])
def test_a_read_body_sent_back_with_a_new_color_id_takes_that_color(
    call: Caller, tool: str
) -> None:
    body = round_trip(call, colorId="11")
    assert body["backgroundColor"] != CALENDAR_COLORS["11"]["background"]  # the stale color
    written = call.ok(tool, calendarId=MARKETING, **body)
    assert colors(written) == palette("11")
    assert colors(call.ok("calendarList_get", calendarId=MARKETING)) == palette("11")


@pytest.mark.parametrize("tool", ["calendarList_patch", "calendarList_update"])
def test_the_read_body_sent_back_unchanged_changes_no_color(call: Caller, tool: str) -> None:
    before = call.ok("calendarList_get", calendarId=MARKETING)
    written = call.ok(tool, calendarId=MARKETING, **round_trip(call))
    assert colors(written) == colors(before)


def test_color_id_alone_sets_both_rgb_fields(call: Caller) -> None:
    assert colors(call.ok("calendarList_patch", calendarId=MARKETING, colorId="5")) == palette("5")


@pytest.mark.parametrize(
    "tool", ["calendarList_patch", "calendarList_update", "calendarList_insert"]
)
@pytest.mark.parametrize("field", ["backgroundColor", "foregroundColor"])
def test_an_rgb_write_without_the_flag_is_refused_and_changes_nothing(
    call: Caller, tool: str, field: str
) -> None:
    key = "id" if tool == "calendarList_insert" else "calendarId"
    if tool == "calendarList_insert":
        call.ok("calendarList_delete", calendarId=MARKETING)
    before = call.ok("calendarList_list", showHidden=True)
    error = call.fail(tool, **{key: MARKETING, field: "#123456"})
    assert (error["code"], error["field"], error["got"]) == ("INVALID_VALUE", field, "#123456")
    assert "colorRgbFormat" in error["hint"]
    assert call.ok("calendarList_list", showHidden=True) == before


@pytest.mark.parametrize("tool", ["calendarList_patch", "calendarList_update"])
def test_colorrgbformat_writes_rgb_and_picks_the_closest_color_id(call: Caller, tool: str) -> None:
    written = call.ok(
        tool, calendarId=MARKETING, backgroundColor="#f73b21", foregroundColor="#ffffff",
        colorId="1", colorRgbFormat=True,
    )  # fmt: skip
    assert (
        colors(written) == ("3", "#f73b21", "#ffffff") and nearest_calendar_color("#f73b21") == "3"
    )
    only_bg = call.ok(tool, calendarId=MARKETING, backgroundColor="#16a764", colorRgbFormat=True)
    assert colors(only_bg)[:2] == ("8", "#16a764")


def test_insert_with_a_color_id_takes_the_palette_color(call: Caller) -> None:
    call.ok("calendarList_delete", calendarId=MARKETING)
    entry = call.ok("calendarList_insert", id=MARKETING, colorId="9")
    assert colors(entry) == palette("9")
