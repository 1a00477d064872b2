"""mcpgym runs on a range of `mcp` releases (pyproject: `mcp>=2.0.0,<2.4`).

The one place that reaches into `mcp` beyond its public names is `mcp_connection` (the
per-connection state a low-level handler cannot otherwise reach). These tests run in the main
venv (highest `mcp`) and in `just test-mcp-range`'s venv (lowest `mcp`), with the MCP suites
that exercise the connection state for real (tests/servers/test_mcp_*.py, test_stdio.py).
"""

from __future__ import annotations

from importlib.metadata import requires, version
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server.connection import Connection
from packaging.requirements import Requirement

from mcpgym.servers.mcp.context import mcp_connection


def _declared(name: str) -> Requirement:
    for line in requires("mcpgym") or []:
        req = Requirement(line)
        if req.name == name and req.marker is None:
            return req
    raise AssertionError(f"mcpgym declares no {name} requirement")


def test_installed_mcp_is_in_the_declared_range() -> None:
    req = _declared("mcp")
    assert version("mcp") in req.specifier, (version("mcp"), str(req.specifier))
    # The range is a range: it admits the lowest tested release and the highest.
    assert "2.0.0" in req.specifier and "2.3.0" in req.specifier
    # mcp pins its wire-types package to its own version; a mismatch would be a broken venv.
    assert version("mcp-types") == version("mcp")


class _Conn(Connection):
    def __init__(self) -> None:  # no transport needed: only the type is checked
        self.state = {}


@pytest.mark.parametrize(
    "make",
    [
        lambda c: SimpleNamespace(connection=c, session=None),  # a public `connection`
        lambda c: SimpleNamespace(session=SimpleNamespace(connection=c)),
        lambda c: SimpleNamespace(session=SimpleNamespace(_connection=c)),  # mcp 2.0 - 2.3
    ],
    ids=["context.connection", "session.connection", "session._connection"],
)
def test_every_spelling_of_the_connection_is_found(make: Any) -> None:
    conn = _Conn()
    assert mcp_connection(make(conn)) is conn


@pytest.mark.parametrize(
    "request_ctx",
    [
        SimpleNamespace(),
        SimpleNamespace(session=None),
        SimpleNamespace(session=SimpleNamespace(_connection={"state": {}})),  # wrong type
        SimpleNamespace(connection="not a connection", session=SimpleNamespace()),
    ],
)
def test_a_context_without_a_connection_fails_clearly(request_ctx: Any) -> None:
    with pytest.raises(RuntimeError, match=r"mcp 2\.\d+\.\d+ exposes no per-connection state"):
        mcp_connection(request_ctx)
