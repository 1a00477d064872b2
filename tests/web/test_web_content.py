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
