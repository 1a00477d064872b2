"""A browser tab of the web suite: its page, what it requested and logged, its artifacts."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ARTIFACTS = Path(os.environ.get("MCPGYM_WEB_ARTIFACTS", "build/web-artifacts")).resolve()
"""Screenshots and ARIA snapshots of the main states (CI lists this folder)."""


@dataclass
class Tab:
    """One browser context and its page, with what it requested and logged."""

    page: Any
    context: Any
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def shot(self, name: str) -> str:
        """Save a screenshot and the ARIA snapshot of `main` under the artifacts folder; returns
        the snapshot text (what tests compare, never pixels)."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        aria = self.page.locator("body").aria_snapshot()
        (ARTIFACTS / f"{name}.aria.yml").write_text(aria + "\n", encoding="utf-8")
        return aria


def episode_id(tab: Tab) -> str:
    """The episode id the page shows in its header badge."""
    text = tab.page.locator("#episode-badge").text_content() or ""
    m = re.match(r"episode (\S+)", text)
    assert m, text
    return m.group(1)
