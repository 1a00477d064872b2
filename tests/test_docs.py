"""The Python examples of docs pages without a test of their own run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from helpers.server import run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.S)


def test_authoring_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # a real module, as a user's file would be (pydantic resolves annotations through it)
    module = types.ModuleType("docs_authoring")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    blocks = _blocks("authoring.md")
    assert len(blocks) >= 4
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/authoring.md[{i}]", "exec"), module.__dict__)


@pytest.mark.server
def test_client_example_runs_against_a_real_server() -> None:
    (block,) = _blocks("client.md")
    with run_server(create_app(GuessEnv)) as server:
        code = block.replace("http://127.0.0.1:8000", server.url)
        exec(compile(code, "docs/client.md", "exec"), {"__name__": "docs_client"})
        server.wait_for_sessions(0)
