"""The 2026-07-28 `requestState` on `/mcp` (servers/mcp/request_state.py), real uvicorn servers.

A server whose tools never ask the client runs without the `mcp` package's sealing boundary
(`NoStateBoundary`); one whose tools may ask runs with it. Every kind of `requestState` a client
can send is answered the same way by both: a state sealed by another server, a tampered one,
garbage, the wrong JSON type. A state this server minted still works (the asking round trip).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers.mcp import modern_call, rpc_result
from helpers.server import RunningServer, run_server
from mcpgym import ToolContext, tool
from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


class AskingGuess(GuessEnv):
    """GuessEnv plus one tool that asks the client: its server seals request states."""

    @tool
    async def confirm(self, ctx: ToolContext) -> str:
        """Ask the user to confirm."""
        answer = await ctx.elicit("Please confirm", CONFIRM, key="confirm")
        return f"confirmed={(answer.content or {}).get('ok')}"


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, RunningServer]]:
    lean = create_app(GuessEnv, mode="production")
    asking = create_app(AskingGuess, mode="production")
    with run_server(lean) as a, run_server(asking) as b:
        yield {"lean": a, "asking": b}


def call(
    server: RunningServer, name: str, arguments: dict[str, Any], **params: Any
) -> dict[str, Any]:
    """One 2026-07-28 tools/call (a self-contained POST) and its JSON-RPC message."""
    body, headers = modern_call(
        name,
        arguments,
        request_id=3,
        capabilities={"elicitation": {}},
        client_info={"name": "request-state-test", "version": "1"},
        **params,
    )
    response = httpx.post(f"{server.url}/mcp", json=body, headers=headers, timeout=15.0)
    if response.status_code != 200:  # an error may come with a 4xx status: still JSON-RPC
        return response.json()
    return rpc_result(response)


def minted(server: RunningServer) -> str:
    """A request state `server` sealed (the first round of the asking tool)."""
    first = call(server, "confirm", {})
    result = first["result"]
    assert result.get("resultType") == "input_required", first
    return result["requestState"]


def test_the_boundary_is_installed_only_where_a_tool_asks() -> None:
    from mcp.server.request_state import RequestStateBoundary

    from mcpgym.servers.mcp.request_state import NoStateBoundary

    lean = create_app(GuessEnv, mode="production").state.mcp.server().middleware
    asking = create_app(AskingGuess, mode="production").state.mcp.server().middleware
    assert any(isinstance(m, NoStateBoundary) for m in lean)
    assert not any(isinstance(m, RequestStateBoundary) for m in lean)
    assert any(isinstance(m, RequestStateBoundary) for m in asking)


def test_a_minted_state_completes_the_round_trip(servers: dict[str, RunningServer]) -> None:
    asking = servers["asking"]
    state = minted(asking)
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    done = call(asking, "confirm", {}, requestState=state, inputResponses=answer)
    assert done["result"]["content"][0]["text"] == "confirmed=True", done


def _hostile_states(servers: dict[str, RunningServer]) -> dict[str, Any]:
    sealed_elsewhere = minted(servers["asking"])  # valid, but sealed under another server's key
    head, _, rest = sealed_elsewhere.partition(".")
    raw = bytearray(base64.urlsafe_b64decode(rest + "=" * (-len(rest) % 4)))
    raw[-1] ^= 1  # one flipped bit in the tag
    tampered = head + "." + base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    return {
        "sealed by another server": sealed_elsewhere,
        "tampered": tampered,
        "empty": "",
        "garbage": "not a state",
        "prefix only": "v1.",
        "short": "v1.AAAA",
        "not base64": "v1.***",
        "plaintext answers": '{"answers": {"confirm": {"action": "accept"}}}',
        "huge": "v1." + "A" * 200_000,
        "number": 12,
        "object": {"answers": {}},
        "list": ["v1."],
        "boolean": True,
    }


def test_every_foreign_state_is_refused_alike(servers: dict[str, RunningServer]) -> None:
    """The lean server (no boundary up front) and the asking one answer each hostile state with
    the same JSON-RPC error, and neither runs the tool."""
    for kind, state in _hostile_states(servers).items():
        answers = {
            name: call(server, "guess", {"n": 50}, requestState=state)
            for name, server in (("lean", servers["lean"]), ("asking", servers["asking"]))
        }
        lean, asking = answers["lean"], answers["asking"]
        assert "error" in lean, (kind, lean)
        assert lean["error"]["code"] == -32602, (kind, lean)
        assert lean["error"]["message"] == "Invalid or expired requestState", (kind, lean)
        assert lean == asking, kind
    for server in servers.values():  # still serving, and the tool state is untouched
        ok = call(server, "guess", {"n": 50})
        assert ok["result"]["isError"] is False, ok
