"""Result cards for content blocks (text and images) over both transports, and the ARIA
structure of the main views (compared as snapshot text, never as pixels)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from webtab import Tab

from mcpgym.examples.everything import EverythingEnv

pytestmark = pytest.mark.web
# deselected in the default run, where Playwright may not be installed
expect = pytest.importorskip("playwright.sync_api").expect


@pytest.mark.parametrize("mode", ["simulation", "production"])
def test_text_and_image_results(
    open_tab: Callable[..., Tab], serve: Callable[..., Any], mode: str
) -> None:
    server = serve(EverythingEnv, mode=mode)
    tab = open_tab(server.url + "/web")
    page = tab.page
    done = "started" if mode == "simulation" else "Connected"
    expect(page.locator("#status")).to_contain_text(done)
    expect(page.get_by_label("Filter tools")).to_be_visible()  # many tools
    page.get_by_label("Filter tools").fill("multiple_content")
    page.locator("#tool-test_multiple_content_types").check()
    if mode == "production":
        page.once("dialog", lambda d: d.accept())  # no annotations: may be destructive
    page.get_by_role("button", name="Call tool").click()
    image = page.locator("#result img")
    expect(image).to_have_count(1)
    expect(image).to_have_attribute("alt", "image from the tool result")
    assert page.evaluate("() => document.querySelector('#result img').naturalWidth") > 0
    expect(page.locator("#result pre").first).not_to_be_empty()
    assert tab.console_errors == []
    tab.shot(f"content-{mode}")


def test_aria_structure_of_the_simulation_view(
    open_tab: Callable[..., Tab], serve: Callable[..., Any]
) -> None:
    from webenv import WebEnv

    tab = open_tab(serve(WebEnv).url + "/web")
    expect(tab.page.locator("#status")).to_contain_text("started")
    aria = tab.shot("aria-simulation")
    assert "- banner:" in aria and "- main:" in aria and "- contentinfo:" in aria
    expect(tab.page.locator("#tools")).to_match_aria_snapshot(
        """
        - region "Tools":
          - heading "Tools" [level=3]
          - group "Tool":
            - radio "add" [checked]
            - radio "plan"
            - radio "peek"
            - text: peek read-only
            - radio "wipe"
            - text: wipe destructive
          - paragraph: 5 of 5 tools
        """
    )
    expect(tab.page.locator("#left")).to_match_aria_snapshot(
        """
        - region "Actions":
          - heading "Actions" [level=2]
          - heading "Episode" [level=3]
          - spinbutton "Seed"
          - textbox "Episode id"
          - button "Reset"
        """
    )


def test_a_plain_environment_gets_an_action_form(
    open_tab: Callable[..., Tab], serve: Callable[..., Any]
) -> None:
    from helpers.envs import SyncCounter

    tab = open_tab(serve(SyncCounter).url + "/web")
    page = tab.page
    expect(page.locator("#status")).to_contain_text("started")
    expect(page.locator("#tools")).to_be_hidden()
    expect(page.locator("#call-h")).to_have_text("Step")
    form = page.locator("#panel-form")
    expect(form.get_by_label("op")).to_have_value("inc")
    form.get_by_label("by").fill("4")
    form.get_by_label("by").press("Control+Enter")
    row = page.locator("#history tbody tr").nth(1)
    expect(row.locator("td")).to_have_text(["2", "step", '{"by":4}', "4", "no"])
    expect(page.locator("#result")).to_contain_text("total: 4")
    form.get_by_label("op").select_option("boom")  # the environment raises: this session only
    form.get_by_label("by").press("Control+Enter")
    expect(page.locator("#result")).to_contain_text("EXECUTION_ERROR")
    form.get_by_label("op").select_option("inc")
    form.get_by_label("by").fill("6")
    form.get_by_label("by").press("Control+Enter")
    expect(page.locator("#status")).to_contain_text("Episode done (reward 6)")
    assert tab.console_errors == []
