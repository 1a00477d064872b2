"""Helpers for the MCP tests: the official `mcp` Client over HTTP and stdio, and raw JSON-RPC."""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, Literal

import httpx
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette

from mcpgym import MCPEnvironment, tool

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
    return not app.state.mcp.json_response


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
    http: httpx.Client,
    url: str,
    sid: str,
    method: str,
    params: Any = None,
    request_id: int = 2,
    **headers: str,
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
        events = [
            line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")
        ]
        messages = [json.loads(e) for e in events if e]
        return [m for m in messages if "id" in m][-1]
    return response.json()


class StdioProcess:
    """`mcpgym serve TARGET --stdio` as a raw subprocess: newline-delimited JSON-RPC on its
    stdin/stdout, read with deadlines (a reader thread feeds a queue)."""

    def __init__(self, target: str, *args: str, cwd: str | None = None) -> None:
        self.proc = subprocess.Popen(
            [*MCPGYM, "serve", target, "--stdio", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []

        def pump_stdout() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.stdout_lines.append(line)
                self.lines.put(line)
            self.lines.put(None)

        def pump_stderr() -> None:  # drained continuously so a chatty server never blocks
            assert self.proc.stderr is not None
            self.stderr_lines.extend(self.proc.stderr)

        self._pumps = [
            threading.Thread(target=pump_stdout, daemon=True),
            threading.Thread(target=pump_stderr, daemon=True),
        ]
        for pump in self._pumps:
            pump.start()

    def send(self, message: Any) -> None:
        """Write one line (a dict is JSON-encoded; a str is sent as it is)."""
        assert self.proc.stdin is not None
        text = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 15.0) -> dict[str, Any]:
        """The next message the server wrote; fails after `timeout` seconds."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the stdio server wrote nothing within {timeout} s") from None
        assert line is not None, "the stdio server closed its stdout"
        return json.loads(line)

    def request(self, method: str, params: Any = None, request_id: int = 1) -> dict[str, Any]:
        """Send a request and return its response (skipping notifications)."""
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            body["params"] = params
        self.send(body)
        while True:
            message = self.receive()
            if message.get("id") == request_id:
                return message

    def initialize(self) -> dict[str, Any]:
        response = self.request("initialize", initialize_body()["params"], request_id=0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def close_stdin(self, timeout: float = 15.0) -> tuple[int, str]:
        """Close stdin and wait for the exit; returns (exit code, stderr)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        for pump in self._pumps:
            pump.join(timeout=timeout)
        return code, "".join(self.stderr_lines)

    def kill(self) -> None:
        """Stop the process if it still runs, and release its pipes."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=15)
        for pump in self._pumps:
            pump.join(timeout=15)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()


class NoisyEnv(MCPEnvironment):
    """Prints and logs while it serves: neither may reach the stdio wire (served by the stdio
    tests as `helpers.mcp:NoisyEnv` from the tests folder)."""

    @tool
    def shout(self, text: str) -> str:
        """Print, log, and return the text in capitals."""
        print(f"printed {text}")  # unflushed on purpose: it must still not reach the wire
        logging.getLogger("noisy").warning("logged %s", text)
        return text.upper()


def modern_call(
    name: str,
    arguments: dict[str, Any],
    *,
    request_id: int = 7,
    capabilities: dict[str, Any] | None = None,
    client_info: dict[str, Any] | None = None,
    **params: Any,
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 `tools/call` (a self-contained POST): its JSON-RPC body and its headers."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }
    if client_info is not None:
        meta["io.modelcontextprotocol/clientInfo"] = client_info
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta, **params},
    }
    headers = {
        "Accept": JSON_SSE,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    return body, headers
