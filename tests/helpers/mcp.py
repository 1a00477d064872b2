"""Helpers for the MCP tests: the official `mcp` Client over HTTP and stdio, and raw JSON-RPC."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any, Literal

import httpx
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette

ClientMode = Literal["legacy", "auto"]
MCPGYM = [sys.executable, "-m", "mcpgym.servers"]
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
JSON_SSE = "application/json, text/event-stream"


def stdio_params(target: str, *args: str) -> StdioServerParameters:
    """`python -m mcpgym.servers serve TARGET --stdio` as the official client launches it."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcpgym.servers", "serve", target, "--stdio", *args]
    )


@contextlib.asynccontextmanager
async def http_client(
    url: str, mode: ClientMode, *, token: str | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The official Client on `url` (the `/mcp` endpoint), with an optional bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30.0) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=30.0, **options) as client:
            yield client


def mcp_endpoint(app: Starlette) -> Any:
    """The `/mcp` route's endpoint object (`McpEndpoint`)."""
    for route in app.routes:
        if getattr(route, "path", None) == "/mcp":
            return getattr(route, "endpoint", None) or getattr(route, "app", None)
    raise AssertionError("the app has no /mcp route")


def sse_responses(app: Starlette) -> bool:
    """Whether `/mcp` answers with SSE streams (needed for logs, progress, sampling,
    elicitation over HTTP in the 2025-11-25 era)."""
    return not mcp_endpoint(app).manager.json_response


def initialize_body(request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        },
    }


def open_session(http: httpx.Client, url: str, **headers: str) -> str:
    """Initialize a 2025-11-25 session with raw HTTP; returns its `Mcp-Session-Id`."""
    base = {"Accept": JSON_SSE, "Content-Type": "application/json", **headers}
    response = http.post(url, json=initialize_body(), headers=base)
    assert response.status_code == 200, response.text
    sid = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ack = http.post(url, json=note, headers={**base, "Mcp-Session-Id": sid})
    assert ack.status_code == 202, ack.text
    return sid


def rpc(
    http: httpx.Client, url: str, sid: str, method: str, params: Any = None, request_id: int = 2, **headers: str
) -> httpx.Response:
    """One JSON-RPC request in an open 2025-11-25 session."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    base = {"Accept": JSON_SSE, "Content-Type": "application/json", "Mcp-Session-Id": sid}
    return http.post(url, json=body, headers={**base, **headers})


def rpc_result(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, whether sent as JSON or as one SSE event."""
    assert response.status_code == 200, (response.status_code, response.text)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        import json

        events = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        messages = [json.loads(e) for e in events if e]
        return [m for m in messages if "id" in m][-1]
    return response.json()
