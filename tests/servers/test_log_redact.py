"""The episode id of an operator-opened MCP episode is a credential carried in its URL: uvicorn's
access log (`mcpgym serve --log-level info`) must never write it, whatever the request."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from helpers.npm import serve
from mcpgym.servers.guards.log_redact import RedactEpisodeIds

pytestmark = pytest.mark.server


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("/mcp?episode=SECRET", "/mcp?episode=…"),
        ("/mcp?x=1&episode=SECRET&y=2", "/mcp?x=1&episode=…&y=2"),
        ("/mcp?episode=SECRET&episode=SECRET", "/mcp?episode=…&episode=…"),
        ("/mcp?a=1&episode=SECRET%20more", "/mcp?a=1&episode=…"),
        ("/mcp/episodes/SECRET", "/mcp/episodes/…"),
        ("/mcp/episodes/SECRET?episode=SECRET", "/mcp/episodes/…?episode=…"),
    ],
)
def test_the_filter_rewrites_every_episode_parameter(path: str, kept: str) -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "POST", path, "1.1", 200), None,
    )  # fmt: skip
    assert RedactEpisodeIds().filter(record)
    line = record.getMessage()
    assert "SECRET" not in line and kept in line, line


def test_mcpgym_serve_never_logs_an_episode_id(tmp_path: Path) -> None:
    with serve("mcpgym.examples.guess:GuessEnv", tmp_path, "--log-level", "info") as served:
        url = served.url
        opened = httpx.post(f"{url}/mcp/episodes", json={"reset": {"seed": 1}}, timeout=10)
        assert opened.status_code == 201, opened.text
        episode = opened.json()["episode"]
        for path in (f"/mcp?episode={episode}", f"/mcp?a=1&episode={episode}", "/mcp?episode=x"):
            httpx.post(url + path, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=10)
        httpx.get(f"{url}/mcp/episodes/{episode}", timeout=10)  # the operator's record route
        httpx.delete(f"{url}/mcp/episodes/{episode}", timeout=10)
    output = served.log.read_text()  # the server has stopped: its whole log is written
    assert "episode=…" in output and "/mcp/episodes/… " in output, output  # the log ran
    assert episode not in output, output
