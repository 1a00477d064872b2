"""The Python examples of docs/harness.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "harness.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)

pytestmark = pytest.mark.server


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_docs_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"docs/harness.md[{index}]", "exec"), {"__name__": "docs"})


def test_docs_has_examples() -> None:
    assert BLOCKS
