"""Production mode over real MCP: bearer tokens act as users, and sharing really grants access.

A real uvicorn server on 127.0.0.1 serves Calendar Gym in production mode with a token map; the
official `mcp` client connects once per token (both protocol eras)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from calendar_gym import CalendarEnv
from helpers.server import run_server
from mcpgym.servers import create_app

pytestmark = pytest.mark.server

PRINCIPALS = {
    "tok-alice": {"user": "alice@acme.test"},
    "tok-bob": {"user": "bob@acme.test"},
}


class Session:
    """One user's MCP connection."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
        result = await self.client.call_tool(tool, args)
        return bool(result.is_error), dict(result.structured_content or {})


@contextlib.asynccontextmanager
async def _connect(url: str, token: str, mode: str) -> AsyncIterator[Session]:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:  # type: ignore[arg-type]
            yield Session(client)


async def _calendar_ids(user: Session) -> set[str]:
    failed, listed = await user.call("calendarList_list")
    assert not failed, listed
    return {item["id"] for item in listed["items"]}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_tokens_two_users_and_sharing_grants_access(mode: str) -> None:
    app = create_app(CalendarEnv, mode="production", principals=PRINCIPALS)
    with run_server(app) as server:
        async with (
            _connect(server.url, "tok-alice", mode) as alice,
            _connect(server.url, "tok-bob", mode) as bob,
        ):
            alice_ids, bob_ids = await _calendar_ids(alice), await _calendar_ids(bob)
            assert alice_ids != bob_ids

            failed, created = await alice.call("calendars_insert", summary=f"Alice plans {mode}")
            assert not failed, created
            new_id = created["id"]
            assert new_id not in await _calendar_ids(bob)

            failed, denied = await bob.call("events_list", calendarId=new_id)
            assert failed and denied["error"]["code"] == "NOT_FOUND"  # existence is not revealed

            failed, rule = await alice.call(
                "acl_insert",
                calendarId=new_id,
                role="reader",
                scope={"type": "user", "value": "bob@acme.test"},
            )
            assert not failed, rule

            failed, events = await bob.call("events_list", calendarId=new_id)
            assert not failed, events
            assert events["items"] == []
            assert new_id in await _calendar_ids(bob)

            failed, write = await bob.call(
                "events_insert",
                calendarId=new_id,
                summary="Bob was here",
                start={"dateTime": "2026-03-05T10:00:00-05:00"},
                end={"dateTime": "2026-03-05T11:00:00-05:00"},
            )
            assert failed and write["error"]["code"] == "PERMISSION_DENIED"
            assert write["error"]["current_role"] == "reader"


async def test_unknown_token_is_401() -> None:
    app = create_app(CalendarEnv, mode="production", principals=PRINCIPALS)
    with run_server(app) as server:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                f"{server.url}/mcp",
                headers={"Authorization": "Bearer nope", "Accept": "application/json"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
        assert response.status_code == 401


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_in_simulation_a_principal_token_acts_as_its_user(mode: str) -> None:
    """A principal's token on plain `/mcp` of a simulation server (each connection its own
    instance) acts as the user the principals file names, not as the default user: bob's
    token saw alice's primary calendar as its owner (found by a hostile review, 2026-12-03)."""
    app = create_app(CalendarEnv, mode="simulation", token="tok-operator", principals=PRINCIPALS)
    with run_server(app) as server:
        async with (
            _connect(server.url, "tok-alice", mode) as alice,
            _connect(server.url, "tok-bob", mode) as bob,
        ):
            for user, email in ((alice, "alice@acme.test"), (bob, "bob@acme.test")):
                failed, primary = await user.call("calendarList_get", calendarId="primary")
                assert not failed and primary["id"] == email, primary


async def test_a_principal_whose_user_is_missing_gets_a_json_error() -> None:
    """An operator's principals file naming a user the world lacks: that principal's requests
    are a JSON-RPC error (503), not a plain-text 500, and the other principals are served."""
    principals = {**PRINCIPALS, "tok-ghost": {"user": "ghost@nowhere.test"}}
    app = create_app(CalendarEnv, mode="production", principals=principals)
    with run_server(app) as server:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
        accept = "application/json, text/event-stream"
        async with httpx2.AsyncClient(timeout=30) as http:
            for message in (initialize, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}):
                response = await http.post(
                    f"{server.url}/mcp",
                    headers={"Authorization": "Bearer tok-ghost", "Accept": accept},
                    json=message,
                )
                assert response.headers["content-type"].startswith("application/json")
                assert "ghost@nowhere.test" in response.json()["error"]["message"], response.text
        async with _connect(server.url, "tok-alice", "auto") as alice:
            assert "alice@acme.test" in await _calendar_ids(alice)
