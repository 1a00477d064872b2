"""The Python blocks of docs/code_gym.md that need bubblewrap run here, each alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "code_gym.md"
FRAGMENT = re.compile(
    r"<!-- fragment: needs bubblewrap; run by tests/code_gym/test_docs_code.py -->\n"
    r"```python\n(.*?)```",
    re.S,
)
BLOCKS = FRAGMENT.findall(PAGE.read_text(encoding="utf-8"))

pytestmark = pytest.mark.code


def test_the_page_has_sandboxed_blocks() -> None:
    assert len(BLOCKS) == 2


@pytest.mark.timeout(300)
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_block_runs_and_prints_what_its_comment_says(index: int, tmp_path: Path) -> None:
    block = BLOCKS[index]
    done = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, cwd=tmp_path, timeout=280
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = [
        line.split("# ", 1)[1] for line in block.splitlines() if "print(" in line and "# " in line
    ]
    for expected in said:
        head = expected.removesuffix("...}").rstrip(", ")
        assert head in done.stdout, (expected, done.stdout)
