"""The web UI in a real browser (marker `web`): budget, forms, keys, sessions, export/replay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from webenv import WebEnv
from webtab import Tab, episode_id

pytestmark = pytest.mark.web
# deselected in the default run, where Playwright may not be installed
expect = pytest.importorskip("playwright.sync_api").expect


def started(tab: Tab) -> None:
    expect(tab.page.locator("#status")).to_contain_text("started")


@pytest.fixture
def web_url(serve: Callable[..., Any]) -> str:
    return serve(WebEnv).url + "/web"


def test_load_budget_hosts_and_console(open_tab: Callable[..., Tab], web_url: str) -> None:
    tab = open_tab(web_url)
    started(tab)
    tab.page.locator("#tool-plan").check()
    expect(tab.page.locator("#call-h")).to_have_text("Call plan")
    assert len(tab.requests) <= 5, tab.requests
    origin = urlsplit(web_url).netloc
    assert {urlsplit(u).netloc for u in tab.requests} == {origin}
    assert tab.console_errors == []
    tab.shot("simulation-plan-form")


def test_nested_form_renders_groups_and_selects(open_tab: Callable[..., Tab], web_url: str) -> None:
    tab = open_tab(web_url)
    started(tab)
    page = tab.page
    page.locator("#tool-plan").check()
    form = page.locator("#panel-form")
    for legend in ("trip", "transport (train)", "travellers", "tags"):
        expect(form.locator("legend", has_text=legend).first).to_be_visible()
    expect(form.get_by_label("pace")).to_have_value("normal")  # the default, prefilled
    kind = form.get_by_label("transport: kind")
    expect(kind.locator("option")).to_have_text(["train", "flight"])
    kind.select_option(label="flight")
    expect(form.locator("legend", has_text="transport (flight)")).to_be_visible()
    expect(form.get_by_label("window")).to_be_visible()
    expect(form.get_by_label("coach")).to_have_count(0)
    form.get_by_role("button", name="Add to travellers").click()
    expect(form.get_by_label("name")).to_be_focused()
    form.get_by_label("name").fill("Ada")
    form.get_by_label("age").fill("36")
    form.get_by_role("button", name="Add entry to tags").click()
    form.get_by_label("tags key 1").fill("team")
    form.get_by_label("tags value 1").fill("infra")
    form.get_by_label("extra (JSON)").fill('{"n": [1, 2]}')
    form.get_by_role("button", name="Fill example for trip").click()
    expect(form.get_by_label("destination")).to_have_value("Oslo")
    page.get_by_role("tab", name="JSON").click()
    args = json.loads(page.locator("#json-args").input_value())
    assert args["trip"]["destination"] == "Oslo"
    assert args["tags"] == {"team": "infra"} and args["extra"] == {"n": [1, 2]}
    # two-way: what the JSON tab says goes back into the form
    args["trip"]["transport"] = {"kind": "train", "coach": 4}
    page.locator("#json-args").fill(json.dumps(args))
    page.get_by_role("tab", name="Form").click()
    expect(form.get_by_label("coach")).to_have_value("4")
    expect(form.get_by_label("transport: kind")).to_have_value("0")  # the train variant
    page.get_by_role("button", name="Call tool").click()
    expect(page.locator("#history tbody tr")).to_have_count(2)
    expect(page.locator("#state-tree")).to_contain_text("Oslo")
    assert tab.console_errors == []


def test_ctrl_enter_submits_and_the_history_row_matches(
    open_tab: Callable[..., Tab], web_url: str
) -> None:
    tab = open_tab(web_url)
    started(tab)
    page = tab.page
    page.locator("#tool-add").check()
    page.get_by_label("n", exact=True).fill("3")
    page.get_by_label("n", exact=True).press("Control+Enter")
    row = page.locator("#history tbody tr").nth(1)
    expect(row.locator("td")).to_have_text(["2", "add", '{"n":3}', "-0.7", "no"])
    expect(page.locator("#result")).to_contain_text("3")
    expect(page.locator("#timeline li")).to_have_count(1)
    expect(page.locator("#state-tree .changed", has_text="3")).to_have_count(1)
    tab.shot("simulation-after-call")


def test_required_fields_show_inline_errors_and_get_focus(
    open_tab: Callable[..., Tab], web_url: str
) -> None:
    tab = open_tab(web_url)
    started(tab)
    page = tab.page
    page.locator("#tool-plan").check()
    page.locator("#panel-form").get_by_label("pace").press("Control+Enter")
    destination = page.locator("#panel-form").get_by_label("destination")
    expect(destination).to_be_focused()
    expect(destination).to_have_attribute("aria-invalid", "true")
    errors = page.locator("#panel-form .err:not([hidden])")
    expect(errors).to_have_count(2)  # destination and coach
    expect(errors.first).to_have_text("Required.")
    expect(page.locator("#history tbody tr")).to_have_count(1)  # nothing was sent
    tab.shot("simulation-inline-errors")
    # bounds are checked before sending, too
    page.locator("#tool-add").check()
    page.get_by_label("n", exact=True).fill("500")
    page.get_by_label("n", exact=True).press("Control+Enter")
    expect(page.locator("#panel-form .err:not([hidden])")).to_have_text("Must be at most 100.")


def test_server_validation_errors_land_on_their_fields(
    open_tab: Callable[..., Tab], web_url: str
) -> None:
    tab = open_tab(web_url)
    started(tab)
    page = tab.page
    page.locator("#tool-plan").check()
    page.get_by_role("tab", name="JSON").click()
    bad = {"trip": {"destination": "Rome", "transport": {"kind": "train", "coach": 99}}}
    page.locator("#json-args").fill(json.dumps(bad))
    page.locator("#json-args").press("Control+Enter")
    coach = page.locator("#panel-form").get_by_label("coach")
    expect(coach).to_be_focused()
    expect(coach).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#result")).to_contain_text("invalid_args")


def test_two_contexts_are_two_sessions(open_tab: Callable[..., Tab], web_url: str) -> None:
    a, b = open_tab(web_url), open_tab(web_url)
    started(a)
    started(b)
    assert episode_id(a) != episode_id(b)
    a.page.locator("#tool-finish").check()
    a.page.get_by_role("button", name="Call tool").click()
    expect(a.page.locator("#status")).to_contain_text("Episode done")
    expect(a.page.locator("#timeline .done-marker")).to_have_count(1)
    expect(b.page.locator("#timeline .done-marker")).to_have_count(0)
    b.page.locator("#tool-add").check()
    b.page.get_by_label("n", exact=True).fill("10")
    b.page.get_by_role("button", name="Call tool").click()
    row = b.page.locator("#history tbody tr").nth(1)
    expect(row.locator("td")).to_have_text(["2", "add", '{"n":10}', "0", "no"])
    expect(b.page.locator("#episode-badge")).to_contain_text("step 1")


def test_at_capacity_the_second_tab_says_server_full(
    open_tab: Callable[..., Tab], serve: Callable[..., Any]
) -> None:
    server = serve(WebEnv, max_sessions=1)
    a = open_tab(server.url + "/web")
    started(a)
    b = open_tab(server.url + "/web")
    expect(b.page.get_by_role("alert")).to_contain_text("Server full: all 1 of 1 sessions")
    expect(b.page.get_by_role("button", name="Call tool")).to_be_disabled()
    b.shot("server-full")
    a.context.close()
    server.wait_for_sessions(0)
    b.page.get_by_role("button", name="Start a new session").click()
    started(b)
    expect(b.page.get_by_role("alert")).to_be_hidden()


def test_a_dropped_session_disables_the_controls(
    open_tab: Callable[..., Tab], serve: Callable[..., Any]
) -> None:
    server = serve(WebEnv, idle_timeout_s=0.5, reap_interval_s=0.1)
    tab = open_tab(server.url + "/web")
    expect(tab.page.get_by_role("alert")).to_contain_text("A new session means a new episode")
    expect(tab.page.get_by_role("button", name="Call tool")).to_be_disabled()
    expect(tab.page.get_by_role("button", name="Reset")).to_be_disabled()
    tab.shot("disconnected")


def test_shortcuts_never_fire_inside_inputs(open_tab: Callable[..., Tab], web_url: str) -> None:
    tab = open_tab(web_url)
    started(tab)
    page = tab.page
    rows = page.locator("#history tbody tr")
    page.get_by_label("Episode id").press("r")
    expect(page.get_by_label("Episode id")).to_have_value("r")
    page.locator("#episode-id").fill("")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("r")
    expect(rows).to_have_count(2)
    page.keyboard.press("/")
    expect(page.locator("#tool-add")).to_be_focused()  # 5 tools: no filter, the first tool


def test_export_parses_and_replays(
    open_tab: Callable[..., Tab], web_url: str, tmp_path: Path
) -> None:
    tab = open_tab(web_url, accept_downloads=True)
    started(tab)
    page = tab.page
    page.locator("#tool-add").check()
    for n in (2, 3, 5):
        page.get_by_label("n", exact=True).fill(str(n))
        page.get_by_label("n", exact=True).press("Control+Enter")
        expect(page.locator("#history tbody tr")).to_have_count(1 + [2, 3, 5].index(n) + 1)
    with page.expect_download() as info:
        page.get_by_role("button", name="Export JSONL").click()
    path = tmp_path / "episode.jsonl"
    info.value.save_as(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["kind"] for r in rows] == ["reset", "call", "call", "call"]
    assert [r.get("arguments") for r in rows[1:]] == [{"n": 2}, {"n": 3}, {"n": 5}]
    assert rows[-1]["state"]["total"] == 10 and rows[-1]["reward"] == 0
    page.locator("#replay-file").set_input_files(str(path))
    expect(page.locator("#replay-info")).to_have_text("Replaying episode.jsonl: 4 rows.")
    scrubber = page.get_by_label("Replay row")
    expect(scrubber).to_have_attribute("max", "3")
    scrubber.fill("2")
    expect(page.locator("#history tr.current td").first).to_have_text("3")
    expect(page.locator("#state-tree")).to_contain_text("total: 5")
    expect(page.locator("#timeline li")).to_have_count(2)
    tab.shot("replay")
    page.get_by_role("button", name="Back to live").click()
    expect(page.get_by_role("button", name="Call tool")).to_be_enabled()


def test_the_player_sees_no_answer_key_no_false_alarm_and_the_tool_it_filtered(
    open_tab: Callable[..., Tab], web_url: str
) -> None:
    """Issue 29: the State panel (the trainer's view: it can hold what the grader checks) is
    closed while a person plays the agent; in simulation only a tool that says it is destructive
    is badged so; filtering the list down selects a tool the list shows."""
    tab = open_tab(web_url)
    started(tab)
    page = tab.page
    expect(page.locator("#state-details")).not_to_have_attribute("open", "")
    expect(page.locator("#state-tree")).to_be_hidden()
    expect(page.locator("[data-tool=finish] .badge")).to_have_count(0)  # no annotations
    expect(page.locator("[data-tool=wipe] .badge")).to_have_text("destructive")
    page.locator("#tool-plan").check()
    page.evaluate(
        "() => { const f = document.querySelector('#tool-filter'); "
        "f.value = 'finish'; f.dispatchEvent(new Event('input')); }"
    )
    expect(page.locator("#tool-finish")).to_be_checked()
    expect(page.locator("#call-h")).to_have_text("Call finish")
    assert tab.console_errors == []
