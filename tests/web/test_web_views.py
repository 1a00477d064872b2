"""The web UI's production view, accessibility (axe), reflow and a proxy path prefix."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route
from webenv import WebEnv
from webtab import Tab

from helpers.server import run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = pytest.mark.web
# deselected in the default run, where Playwright may not be installed
expect = pytest.importorskip("playwright.sync_api").expect
TOKEN = "tok-web-7f3a"


def axe_script() -> Path:
    """axe-core as shipped inside the PyPI package axe-playwright-python (no network)."""
    return Path(str(resources.files("axe_playwright_python") / "axe.min.js"))


def axe_violations(tab: Tab) -> list[dict[str, Any]]:
    tab.page.add_script_tag(path=str(axe_script()))
    result = tab.page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}})"
    )
    return [
        {"id": v["id"], "nodes": [n["target"] for n in v["nodes"]][:5]}
        for v in result["violations"]
    ]


def started(tab: Tab) -> None:
    expect(tab.page.locator("#status")).to_contain_text("started")


@pytest.fixture
def production(serve: Callable[..., Any]) -> Any:
    return serve(GuessEnv, mode="production", token=TOKEN)


def connect(tab: Tab, token: str = TOKEN) -> None:
    tab.page.get_by_label("Bearer token").fill(token)
    tab.page.get_by_role("button", name="Connect").click()


def test_production_view(open_tab: Callable[..., Tab], production: Any) -> None:
    for path in ("/reset", "/step"):
        assert httpx.post(production.url + path, json={}).status_code == 404
    assert httpx.get(production.url + "/state").status_code == 404
    tab = open_tab(production.url + "/web")
    page = tab.page
    expect(page.locator("#banner")).to_contain_text("real effects")
    expect(page.get_by_role("button", name="Reset")).to_have_count(0)
    expect(page.locator("#timeline-card")).to_be_hidden()
    connect(tab, "wrong")
    expect(page.get_by_role("alert")).to_contain_text("refused the token")
    connect(tab)
    expect(page.locator("#status")).to_contain_text("Connected: 2 tools")
    expect(page.locator("#tool-list label")).to_have_text(["guess", "leaderboard"])  # no hint
    assert page.evaluate("() => [localStorage.length, sessionStorage.length]") == [0, 0]
    assert TOKEN not in page.content()
    tab.shot("production-connected")
    aria = page.locator("#left").aria_snapshot()
    assert "Reset" not in aria and 'radio "guess"' in aria

    page.locator("#tool-guess").check()
    expect(page.locator("[data-tool=guess] .badge")).to_have_text("destructive")
    page.get_by_label("n", exact=True).fill("50")
    answers: list[str] = []

    def dismiss(dialog: Any) -> None:
        answers.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    page.get_by_role("button", name="Call tool").click()
    expect(page.locator("#history tbody tr")).to_have_count(0)
    assert answers and "guess" in answers[0]
    page.once("dialog", lambda d: d.accept())
    page.get_by_role("button", name="Call tool").click()
    expect(page.locator("#history tbody tr")).to_have_count(1)
    expect(page.locator("#result")).to_contain_text("verdict")
    page.locator("#tool-leaderboard").check()  # read-only: no confirmation
    page.get_by_role("button", name="Call tool").click()
    expect(page.locator("#history tbody tr")).to_have_count(2)
    tab.shot("production-after-calls")
    assert tab.console_errors == [] or all("401" in e for e in tab.console_errors)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_reports_no_violations(
    open_tab: Callable[..., Tab], serve: Callable[..., Any], scheme: str
) -> None:
    server = serve(WebEnv)
    tab = open_tab(server.url + "/web", bypass_csp=True, color_scheme=scheme)
    started(tab)
    page = tab.page
    page.locator("#tool-plan").check()
    page.locator("#panel-form").get_by_label("pace").press("Control+Enter")  # inline errors
    assert axe_violations(tab) == []
    page.locator("#tool-add").check()
    page.get_by_label("n", exact=True).fill("4")
    page.get_by_label("n", exact=True).press("Control+Enter")
    expect(page.locator("#history tbody tr")).to_have_count(2)
    assert axe_violations(tab) == []
    tab.shot(f"axe-{scheme}")


def test_axe_production(open_tab: Callable[..., Tab], production: Any) -> None:
    tab = open_tab(production.url + "/web", bypass_csp=True)
    assert axe_violations(tab) == []
    connect(tab)
    expect(tab.page.locator("#status")).to_contain_text("Connected")
    assert axe_violations(tab) == []


@pytest.mark.parametrize("width", [390, 320])
def test_no_horizontal_scroll(
    open_tab: Callable[..., Tab], serve: Callable[..., Any], width: int
) -> None:
    server = serve(WebEnv)
    tab = open_tab(server.url + "/web", viewport={"width": width, "height": 800})
    started(tab)
    page = tab.page
    page.locator("#tool-plan").check()
    page.locator("#panel-form").get_by_role("button", name="Add to travellers").click()
    page.get_by_role("tab", name="JSON").click()
    page.get_by_role("tab", name="Form").click()
    page.locator("#panel-form").get_by_label("pace").press("Control+Enter")
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{overflow} px of horizontal scroll at {width} px"
    tab.shot(f"reflow-{width}")


@contextlib.contextmanager
def behind_prefix(prefix: str) -> Iterator[Any]:
    """The app mounted under `prefix`, as a path-prefix proxy presents it (root_path set)."""
    inner = create_app(WebEnv, web=True)

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with inner.router.lifespan_context(inner):
            yield

    async def health(_: Any) -> JSONResponse:
        return JSONResponse({"status": "healthy"})

    outer = Starlette(
        routes=[Route("/health", health), Mount(prefix, app=inner)], lifespan=lifespan
    )
    with run_server(outer) as server:
        yield server


def test_works_behind_a_path_prefix(open_tab: Callable[..., Tab]) -> None:
    with behind_prefix("/gym") as server:
        assert httpx.get(server.url + "/web").status_code == 404
        tab = open_tab(server.url + "/gym/web")
        started(tab)
        tab.page.locator("#tool-add").check()
        tab.page.get_by_label("n", exact=True).fill("1")
        tab.page.get_by_label("n", exact=True).press("Control+Enter")
        expect(tab.page.locator("#history tbody tr")).to_have_count(2)
        assert all("/gym/" in u for u in tab.requests), tab.requests
        assert tab.console_errors == []
