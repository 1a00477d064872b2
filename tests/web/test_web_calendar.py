"""Calendar Gym played by hand through the web UI: the task prompt is shown, the tools work,
and the calendar changes exactly as the same calls change it in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from webtab import Tab

from calendar_gym import CalendarEnv
from calendar_gym.world.seed import CALENDAR_IDS
from mcpgym import CallToolAction, ListToolsAction, ListToolsObservation

pytestmark = pytest.mark.web
# deselected in the default run, where Playwright may not be installed
expect = pytest.importorskip("playwright.sync_api").expect
TASK = "t1-create-haircut/explicit/structured"
START, END = "2026-03-05T17:00:00-05:00", "2026-03-05T17:45:00-05:00"
PERSONAL = CALENDAR_IDS["personal"]  # suite v3: "my Personal calendar", among near-duplicates


def _tool_names() -> list[str]:
    """The tools the task's episode lists, in process (the count the page must show)."""
    env = CalendarEnv()
    env.reset(seed=0, task="t1-create-haircut", error_mode="structured")
    listed = env.step(ListToolsAction())
    assert isinstance(listed, ListToolsObservation)
    return [t.name for t in listed.tools]


def _same_calls_in_process() -> tuple[Any, dict[str, Any], Any]:
    env = CalendarEnv()
    env.reset(seed=0, task="t1-create-haircut", error_mode="structured")
    env.step(
        CallToolAction(
            tool_name="events_insert",
            arguments={
                "calendarId": PERSONAL,
                "summary": "Haircut",
                "start": {"dateTime": START},
                "end": {"dateTime": END},
            },
        )
    )
    listed = env.step(CallToolAction(tool_name="events_list", arguments={"calendarId": PERSONAL}))
    final = env.step(
        CallToolAction(tool_name="finish", arguments={"status": "done", "summary": "Booked."})
    )
    return listed.result, env.state.model_dump(mode="json"), final


def test_a_task_played_by_hand(
    open_tab: Callable[..., Tab], serve: Callable[..., Any], tmp_path: Path
) -> None:
    server = serve(CalendarEnv, web_tasks="calendar_gym.suite:specs")
    tab = open_tab(f"{server.url}/web?task={TASK}", accept_downloads=True)
    page = tab.page
    expect(page.locator("#status")).to_contain_text("started")
    expect(page.get_by_label("Task", exact=True)).to_have_value(TASK)
    expect(page.locator("#prompt")).to_contain_text('Create an event titled "Haircut"')
    expect(page.locator("#prompt")).to_contain_text("call finish(status, summary)")
    tab.shot("calendar-task")

    # the filter is there, counts what it keeps, and the badges come from the annotations
    names = _tool_names()
    shown = sum("events_" in n for n in names)
    page.keyboard.press("/")
    expect(page.get_by_label("Filter tools")).to_be_focused()
    page.get_by_label("Filter tools").fill("events_")
    expect(page.locator("#tool-count")).to_have_text(f"{shown} of {len(names)} tools")
    expect(page.locator("[data-tool=events_list] .badge")).to_have_text("read-only")
    page.locator("#tool-events_insert").check()
    form = page.locator("#panel-form")
    form.get_by_label("calendarId").fill(PERSONAL)
    form.get_by_label("summary").fill("Haircut")
    form.locator("fieldset[data-path=start]").get_by_label("dateTime").fill(START)
    form.locator("fieldset[data-path=end]").get_by_label("dateTime").fill(END)
    tab.shot("calendar-insert-form")
    form.get_by_label("summary").press("Control+Enter")
    expect(page.locator("#history tbody tr")).to_have_count(2)
    expect(page.locator("#result")).to_contain_text("Haircut")

    page.locator("#tool-events_list").check()
    page.locator("#panel-form").get_by_label("calendarId").fill(PERSONAL)
    page.locator("#panel-form").get_by_label("calendarId").press("Control+Enter")
    expect(page.locator("#history tbody tr")).to_have_count(3)

    page.get_by_label("Filter tools").fill("finish")
    page.locator("#tool-finish").check()
    page.locator("#panel-form").get_by_label("status").select_option("done")
    page.locator("#panel-form").get_by_label("summary").fill("Booked.")
    page.locator("#panel-form").get_by_label("summary").press("Control+Enter")
    expect(page.locator("#status")).to_contain_text("Episode done (reward 1")
    expect(page.locator("#timeline .done-marker")).to_have_count(1)
    tab.shot("calendar-done")

    with page.expect_download() as info:
        page.get_by_role("button", name="Export JSONL").click()
    path = tmp_path / "calendar.jsonl"
    info.value.save_as(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r.get("tool", r["kind"]) for r in rows] == [
        "reset",
        "events_insert",
        "events_list",
        "finish",
    ]

    listed, state, final = _same_calls_in_process()
    strip = lambda s: {k: v for k, v in s.items() if k != "episode_id"}  # noqa: E731
    assert strip(rows[-1]["state"]) == strip(state)
    assert rows[2]["observation"]["result"] == listed
    assert rows[-1]["reward"] == final.reward == 1.0 and rows[-1]["done"] is True
    assert tab.console_errors == []
