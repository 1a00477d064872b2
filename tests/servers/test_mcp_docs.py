"""The Python examples of docs/mcp.md and docs/modes.md run as written (the client examples
against a real server, with the documented URL pointed at it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.server import RunningServer, run_server
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

DOCS = Path(__file__).resolve().parents[2] / "docs"


def blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), flags=re.S)


def run_block(code: str, label: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": label}
    exec(compile(code, label, "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def guarded() -> Iterator[RunningServer]:
    with run_server(create_app(GuessEnv, mode="production", token="T")) as server:
        yield server


def test_modes_example() -> None:
    (code,) = blocks("modes.md")
    run_block(code, "modes.md[0]")


def test_mcp_authoring_example() -> None:
    studio = run_block(blocks("mcp.md")[0], "mcp.md[0]")["Studio"]
    env = studio()
    env.reset()
    assert [b["type"] for b in env.call_tool_sync("sketch", {})] == ["text", "image"]
    assert env.call_tool_sync("title", {"topic": "gyms"}) == "Gyms"  # no sampling in simulation


@pytest.mark.server
async def test_mcp_client_examples(
    guarded: RunningServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # the blocks end in `asyncio.run(...)` (tests/test_docs.py runs them so); here, on this loop
    tool_client, official = (b.rsplit("\nasyncio.run(", 1)[0] for b in blocks("mcp.md")[1:3])
    play = run_block(tool_client, "mcp.md[1]")["play"]
    await play(guarded.url)
    assert "guess" in capsys.readouterr().out
    main = run_block(official.replace("http://127.0.0.1:8000", guarded.url), "mcp.md[2]")["main"]
    await main()
    assert "isError=False" in capsys.readouterr().out.replace(" ", "").replace(
        "is_error", "isError"
    )
