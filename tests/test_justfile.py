"""`just --list` shows the one comment line right above each recipe: it must be a whole sentence
(issue 29: ten recipes showed the tail of a longer comment, the main one included)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = re.compile(r"^([a-z][a-z0-9-]*)(?:\s[^:=]*)?:(?!=)")


def test_every_recipe_has_a_whole_sentence_for_just_list() -> None:
    lines = (ROOT / "justfile").read_text(encoding="utf-8").splitlines()
    shown = {}
    for i, line in enumerate(lines):
        found = RECIPE.match(line)
        if found and i and lines[i - 1].startswith("# "):
            shown[found.group(1)] = lines[i - 1][2:]
    assert {"test", "demo", "bench", "setup"} <= set(shown)
    for name, text in shown.items():
        assert text[:1].isupper() or text[:1] == "`", (name, text)  # starts a sentence
        assert text.endswith((".", ")")), (name, text)  # and ends one
        assert len(text) <= 110, (name, text)
