"""Fixtures of the browser suite (marker `web`): Debian's Chromium driven by PyPI Playwright
against real uvicorn servers, one browser per session and a fresh context per tab."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from webtab import Tab

CHROMIUM = os.environ.get("MCPGYM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `just test-web` (it installs Debian's chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def open_tab(browser: Any) -> Iterator[Callable[..., Tab]]:
    """`open_tab(url, **context_options)`: a new context (its own session) on `url`."""
    tabs: list[Tab] = []

    def make(url: str, **options: Any) -> Tab:
        options.setdefault("viewport", {"width": 1280, "height": 900})
        context = browser.new_context(**options)
        context.set_default_timeout(10_000)
        page = context.new_page()
        tab = Tab(page, context)
        page.on("request", lambda r: tab.requests.append(r.url))
        page.on(
            "console",
            lambda m: tab.console_errors.append(m.text) if m.type in ("error", "warning") else None,
        )
        page.on("pageerror", lambda e: tab.console_errors.append(f"pageerror: {e}"))
        page.goto(url)
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        with contextlib.suppress(Exception):
            tab.context.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Any]]:
    """`serve(env, **settings)`: a real uvicorn server with the web UI on."""
    from helpers.server import run_server
    from mcpgym.servers import create_app

    with contextlib.ExitStack() as stack:

        def start(env: Any, **settings: Any) -> Any:
            return stack.enter_context(run_server(create_app(env, web=True, **settings)))

        yield start
