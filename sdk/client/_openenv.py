"""OpenEnv 0.10.0's HTTP `/mcp` dialect, for `MCPToolClient` against an OpenEnv server.

An OpenEnv server does not speak Streamable HTTP MCP (it answers `initialize` with "Method not
found"). Its `/mcp` takes bare JSON-RPC POSTs: `openenv/session/create` returns a `session_id`,
`tools/list` and `tools/call` carry it in `params`, `openenv/session/close` ends it. A tool's
value is FastMCP's `data` field; a failing tool is a JSON-RPC error.

Every failure here is a `ClientError`: `ServerGone` when the server cannot be reached,
`RemoteError` for a JSON-RPC error outside a tool call, `ClientError` for a reply that is not
OpenEnv's.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import httpx2

from mcpgym.client._core import tool_value
from mcpgym.errors import ClientError, RemoteError, ServerGone
from mcpgym.types import CallToolObservation, ToolErrorInfo, ToolInfo

__all__ = ["OpenEnvToolSession"]


class OpenEnvToolSession:
    """One OpenEnv `/mcp` session over an `httpx2.AsyncClient` the caller owns."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.session_id: str | None = None
        self._ids = itertools.count(1)
        self._names: set[str] | None = None

    async def open(self) -> None:
        """Create the session; `ClientError` when the server does not speak this dialect."""
        result = await self._rpc("openenv/session/create", {})
        sid = result.get("session_id") if isinstance(result, dict) else None
        if not isinstance(sid, str) or not sid:
            raise ClientError(f"{self.url} answered openenv/session/create without a session_id")
        self.session_id = sid

    async def list_tools(self) -> list[ToolInfo]:
        result = await self._rpc("tools/list", {"session_id": self.session_id})
        tools: Any = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(tools, list):
            raise ClientError(f"tools/list from {self.url} has no tools list")
        infos = [_tool_info(t) for t in tools if isinstance(t, dict)]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        self._names = {t.name for t in infos}
        return infos

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallToolObservation:
        """Call a tool; its failure (a JSON-RPC error here) is the observation's `error`."""
        if self._names is None:
            await self.list_tools()
        assert self._names is not None
        if name not in self._names:
            info = ToolErrorInfo(error_type="tool_not_found", message=f"Unknown tool: {name!r}")
            return CallToolObservation(tool_name=name, error=info)
        params = {"name": name, "arguments": dict(arguments), "session_id": self.session_id}
        try:
            result = await self._rpc("tools/call", params)
        except RemoteError as err:
            info = ToolErrorInfo(error_type="execution_error", message=err.message)
            return CallToolObservation(tool_name=name, error=info)
        return CallToolObservation(tool_name=name, result=tool_value(result))

    async def close(self) -> None:
        """End the session (best effort: the server reaps it anyway)."""
        sid, self.session_id = self.session_id, None
        if sid is None:
            return
        try:
            await self._rpc("openenv/session/close", {"session_id": sid})
        except ClientError:
            return

    async def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        try:
            response = await self.http.post(self.url, json=body)
        except httpx2.TimeoutException as exc:
            raise ServerGone(f"no reply from {self.url}: {exc}", url=self.url) from None
        except httpx2.TransportError as exc:
            raise ServerGone(f"cannot reach {self.url}: {exc}", url=self.url) from None
        try:
            reply: Any = response.json()
        except ValueError:
            raise ClientError(
                f"{self.url} answered {method} with HTTP {response.status_code}, not JSON-RPC"
            ) from None
        if not isinstance(reply, dict):
            raise ClientError(f"{self.url} answered {method} with a non-object")
        error: Any = reply.get("error")  # pyright: ignore[reportUnknownMemberType]
        if isinstance(error, dict):
            code: Any = error.get("code")  # pyright: ignore[reportUnknownMemberType]
            message: Any = error.get("message")  # pyright: ignore[reportUnknownMemberType]
            raise RemoteError(str(code), str(message or "(no message)"), data=error.get("data"))  # pyright: ignore[reportUnknownMemberType]
        if response.status_code >= 400 or "result" not in reply:
            raise ClientError(
                f"{self.url} answered {method} with HTTP {response.status_code} and no result"
            )
        return reply["result"]


def _tool_info(tool: dict[str, Any]) -> ToolInfo:
    schema: Any = tool.get("input_schema", tool.get("inputSchema")) or {}
    return ToolInfo(
        name=str(tool.get("name", "")),
        description=str(tool.get("description") or ""),
        input_schema=dict(schema) if isinstance(schema, dict) else {},  # pyright: ignore[reportUnknownArgumentType]
    )
