"""Every Python block of docs/*.md runs alone, as a reader would run it: a fresh interpreter, a
temporary working folder, nothing from earlier blocks.

A block that talks to `http://127.0.0.1:8000` gets a real server there instead (its URL swapped
in): GuessEnv in production with token `T` when the block uses production MCP, in simulation
otherwise. Pages name what must be running in the prose before such a block.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.server import RunningServer, run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

DOCS = Path(__file__).resolve().parents[1] / "docs"
PLACEHOLDER = "http://127.0.0.1:8000"


# A block that cannot run alone on a bare machine (it needs Docker, torch, ...) says so in an
# HTML comment on the line before its fence, with the reason and where it is run instead:
# `<!-- fragment: needs a Docker engine; run by tests/containers/test_docs_example.py -->`.
BLOCK = re.compile(r"(?:<!-- fragment: (.+?) -->\n)?```python\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text()
        for i, match in enumerate(
            re.finditer(
                r"(?:<!-- (?:fragment|(tutorial)): (.+?) -->\n)?```python\n(.*?)```", text, re.S
            )
        ):
            tutorial, reason, block = match.groups()
            if tutorial:  # a step of docs/tutorial.md: played in order with the others
                reason = f"tutorial step {reason}: run in order by tests/tutorial/"
            found.append((f"{page.name}[{i}]", f"#fragment: {reason}\n" if reason else block))
    return found


BLOCKS = _blocks()


@pytest.fixture(scope="module")
def simulation() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv)) as server:
        yield server


@pytest.fixture(scope="module")
def production() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv, mode="production", token="T")) as server:
        yield server


def test_the_pages_have_blocks() -> None:
    pages = {name.split("[")[0] for name, _ in BLOCKS}
    assert {"authoring.md", "client.md", "mcp.md", "rubrics.md", "capture.md"} <= pages


@pytest.mark.parametrize(("name", "block"), BLOCKS, ids=[name for name, _ in BLOCKS])
def test_block_runs_alone(
    name: str, block: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if block.startswith("#fragment: "):
        reason = block.removeprefix("#fragment: ").strip()
        assert len(reason) > 10, f"docs/{name}: a fragment must say why and where it runs"
        pytest.skip(f"fragment: {reason}")
    code = block
    if PLACEHOLDER in block:
        production_mcp = 'mode="production"' in block or "/mcp" in block
        server: RunningServer = request.getfixturevalue(
            "production" if production_mcp else "simulation"
        )
        code = block.replace(PLACEHOLDER, server.url)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, f"docs/{name} failed alone:\n{out.stderr[-3000:]}"
