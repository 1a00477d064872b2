"""Code Gym played by hand through the web UI: a HumanEval task is picked, a file is written
and run in the session's sandbox through the form, and `submit` grades it (reward 1.0)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

import pytest
from webtab import Tab

from code_gym import CodeEnv

pytestmark = pytest.mark.web
# deselected in the default run, where Playwright may not be installed
expect = pytest.importorskip("playwright.sync_api").expect
TASK = "HumanEval/53/structured"
SOLUTION = "def add(x: int, y: int) -> int: return x + y"


@pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="Code Gym's sandbox needs bubblewrap: `just test-web` installs it (apt bubblewrap)",
)
def test_code_gym_played_in_the_browser(
    open_tab: Callable[..., Tab], serve: Callable[..., Any]
) -> None:
    server = serve(CodeEnv, web_tasks="code_gym.suite:specs")
    tab = open_tab(f"{server.url}/web?task={TASK}")
    page = tab.page
    expect(page.locator("#status")).to_contain_text("started")
    expect(page.get_by_label("Task", exact=True)).to_have_value(TASK)
    expect(page.locator("#prompt")).to_contain_text("def add(x: int, y: int)")
    form = page.locator("#panel-form")

    page.locator("#tool-write_file").check()
    form.get_by_label("path").fill("solution.py")
    form.get_by_label("content").fill(SOLUTION)
    form.get_by_label("content").press("Control+Enter")
    expect(page.locator("#history tbody tr")).to_have_count(2)
    expect(page.locator("#result")).to_contain_text("bytes: 44")

    page.locator("#tool-run_python").check()
    form.get_by_label("code").fill("from solution import add; print(add(20, 22) * 1000)")
    form.get_by_label("code").press("Control+Enter")
    expect(page.locator("#history tbody tr")).to_have_count(3)
    expect(page.locator("#result")).to_contain_text("42000")  # ran in the sandbox
    tab.shot("code-run-python")

    page.locator("#tool-run_python").check()
    form.get_by_label("code").fill("import os; print(os.getcwd()); print(1/0)")
    form.get_by_label("code").press("Control+Enter")
    expect(page.locator("#history tbody tr")).to_have_count(4)
    expect(page.locator("#result")).to_contain_text("ZeroDivisionError")
    expect(page.locator("#result")).to_contain_text("/workspace")

    page.locator("#tool-submit").check()
    page.get_by_role("button", name="Call tool").click()
    expect(page.locator("#status")).to_contain_text("Episode done (reward 1")
    tab.shot("code-submitted")
    assert tab.console_errors == []
