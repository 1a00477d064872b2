"""`MCPToolClient`: call an environment server's tools the way its mode intends.

- `mode="production"` speaks real MCP to `/mcp` through the official `mcp` package's `Client`
  (Streamable HTTP; `protocol="auto"` negotiates 2026-07-28 with an mcpgym server, `"legacy"`
  does the 2025-11-25 handshake). Nothing goes over the WebSocket.
  Against an OpenEnv 0.10.0 server, whose `/mcp` is its own JSON-RPC dialect, the client falls
  back to that dialect (`openenv/session/create`, then `tools/*` with the session id).
- `mode="simulation"` plays an episode over the WebSocket `/ws` with `EnvClient`: `reset` on
  connect, then every call is a `step` (with a reward; the server keeps the episode's state).

Both return the same shapes: `list_tools()` gives `ToolInfo`s and `call_tool()` a
`CallToolObservation` whose `error` (never an exception) says why a call failed, including an
unknown tool (`tool_not_found`). `result` is the tool's value for typed tools (a return
annotation), content blocks for content tools; an untyped tool's value arrives over MCP as its
content blocks. `SyncMCPToolClient` is the blocking twin.

Example:
    >>> async def main() -> None:  # doctest: +SKIP
    ...     async with MCPToolClient("http://127.0.0.1:8000", mode="production") as tools:
    ...         print([t.name for t in await tools.list_tools()])
    ...         obs = await tools.call_tool("guess", {"n": 50})
    ...         print(obs.result, obs.error)
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Literal, Self

import httpx2
import mcp_types as types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcpgym.client import EnvClient
from mcpgym.client._openenv import OpenEnvToolSession
from mcpgym.errors import ClientError, RemoteError, ServerGone
from mcpgym.tools import WRAP_KEY, Mode
from mcpgym.types import CallToolObservation, ToolErrorInfo, ToolInfo

__all__ = ["MCPToolClient", "SyncMCPToolClient"]


class MCPToolClient:
    """Async client of an environment's tools, over MCP (production) or `step` (simulation).

    Args:
        base_url: the server, e.g. `http://127.0.0.1:8000` (`/mcp` and `/ws` are added).
        mode: `"production"` (MCP on `/mcp`) or `"simulation"` (WebSocket `step`).
        token: bearer token, sent as `Authorization: Bearer ...` on either transport.
        protocol: production only: `"auto"` (2026-07-28 when offered) or `"legacy"`.
        reset_options: simulation only: keyword arguments of the episode's `reset`.
        timeout: seconds to wait for each reply.
    """

    def __init__(
        self,
        base_url: str,
        mode: Mode = "production",
        token: str | None = None,
        *,
        protocol: Literal["auto", "legacy"] = "auto",
        reset_options: Mapping[str, Any] | None = None,
        timeout: float = 30.0,
    ) -> None:
        if mode not in ("production", "simulation"):
            raise ValueError(f"mode must be 'production' or 'simulation', not {mode!r}")
        self.base_url = base_url.rstrip("/")
        self.mode: Mode = mode
        self.protocol = protocol
        self.timeout = timeout
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._reset_options = dict(reset_options or {})
        self._stack: contextlib.AsyncExitStack | None = None
        self._mcp: Client | None = None
        self._env: EnvClient[Any, Any, Any] | None = None
        self._output_schemas: dict[str, dict[str, Any] | None] = {}
        self._refused: tuple[int, str] | None = None
        self._openenv: OpenEnvToolSession | None = None

    @property
    def transport(self) -> Literal["mcp", "websocket"]:
        """What this client speaks: `"mcp"` in production, `"websocket"` in simulation."""
        return "mcp" if self.mode == "production" else "websocket"

    async def connect(self) -> Self:
        """Open the connection (an MCP session, or a WebSocket episode after `reset`)."""
        if self._stack is not None:
            return self
        stack = contextlib.AsyncExitStack()
        try:
            if self.mode == "production":
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        headers=self._headers,
                        timeout=self.timeout,
                        event_hooks={"response": [self._note_refusal]},
                    )
                )
                transport = streamable_http_client(f"{self.base_url}/mcp", http_client=http)
                client = Client(transport, mode=self.protocol, read_timeout_seconds=self.timeout)
                self._mcp = await stack.enter_async_context(client)
            else:
                env: EnvClient[Any, Any, Any] = EnvClient(
                    self.base_url, headers=self._headers, timeout=self.timeout
                )
                self._env = await stack.enter_async_context(env)
                await env.reset(**self._reset_options)
        except BaseException as exc:
            await stack.aclose()
            self._mcp = self._env = None
            if self._refused is not None:  # say why, instead of the mcp client's -32603
                status, url = self._refused
                code = {401: "UNAUTHORIZED", 403: "FORBIDDEN"}.get(status, f"HTTP_{status}")
                raise RemoteError(
                    code, f"{url} refused the MCP connection: HTTP {status}"
                ) from None
            if self.mode != "production" or not isinstance(exc, Exception):
                raise
            # Not spec MCP: perhaps an OpenEnv server, whose /mcp speaks its own dialect.
            await self._connect_openenv(exc)
        else:
            self._stack = stack
        return self

    async def _connect_openenv(self, cause: Exception) -> None:
        """Open an OpenEnv `/mcp` session; a `ClientError` saying both failures otherwise."""
        stack = contextlib.AsyncExitStack()
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=self._headers, timeout=self.timeout)
        )
        session = OpenEnvToolSession(http, f"{self.base_url}/mcp")
        try:
            await session.open()
        except ClientError as err:
            await stack.aclose()
            leaf = _leaf(cause)
            if isinstance(err, ServerGone):
                raise err from None
            raise ClientError(
                f"{self.base_url}/mcp speaks neither MCP ({type(leaf).__name__}: {leaf}) nor "
                f"OpenEnv's /mcp dialect ({err})",
                url=f"{self.base_url}/mcp",
            ) from None
        stack.push_async_callback(session.close)
        self._openenv = session
        self._stack = stack

    async def close(self) -> None:
        """End the MCP session or the episode. Safe to call more than once."""
        stack, self._stack = self._stack, None
        self._mcp = self._env = self._openenv = None
        if stack is not None:
            await stack.aclose()

    async def list_tools(self) -> list[ToolInfo]:
        """The tools visible in the server's mode."""
        await self.connect()
        if self._env is not None:
            return await self._env.list_tools()
        if self._openenv is not None:
            return await self._openenv.list_tools()
        tools = (await self._session().list_tools()).tools
        self._output_schemas = {t.name: t.output_schema for t in tools}
        return [_tool_info(t) for t in tools]

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> CallToolObservation:
        """Call one tool; a failure comes back in the observation's `error`."""
        await self.connect()
        if self._env is not None:
            return await self._env.call_tool(name, dict(arguments or {}))
        if self._openenv is not None:
            return await self._openenv.call_tool(name, arguments or {})
        if name not in self._output_schemas:
            await self.list_tools()
        try:
            result = await self._session().call_tool(name, dict(arguments or {}))
        except MCPError as err:
            if err.code == types.INVALID_PARAMS and name not in self._output_schemas:
                detail = err.data if isinstance(err.data, dict) else {}
                info = ToolErrorInfo.model_validate(
                    {**detail, "error_type": "tool_not_found", "message": err.message, "tool": name}
                )
                return CallToolObservation(tool_name=name, error=info)
            raise RemoteError(str(err.code), err.message, data=err.data) from err
        return _observation(name, result, self._output_schemas.get(name))

    async def _note_refusal(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403, 421):
            self._refused = (response.status_code, str(response.url))

    def _session(self) -> Client:
        if self._mcp is None:
            raise ClientError("the client is closed")
        return self._mcp

    async def __aenter__(self) -> Self:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


class SyncMCPToolClient:
    """The blocking twin of `MCPToolClient` (it runs one on an event loop in a thread).

    Example:
        >>> with SyncMCPToolClient("http://127.0.0.1:8000") as tools:  # doctest: +SKIP
        ...     print(tools.call_tool("guess", {"n": 50}).result)
    """

    def __init__(
        self, base_url: str, mode: Mode = "production", token: str | None = None, **options: Any
    ) -> None:
        self._client = MCPToolClient(base_url, mode, token, **options)
        self._portal_cm: contextlib.AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._session_cm: contextlib.AbstractContextManager[MCPToolClient] | None = None

    @property
    def transport(self) -> Literal["mcp", "websocket"]:
        return self._client.transport

    def connect(self) -> Self:
        """Start the loop thread and open the connection."""
        if self._portal is None:
            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
            # The MCP client's task group must be entered and left in one task.
            self._session_cm = self._portal.wrap_async_context_manager(self._client)
            try:
                self._session_cm.__enter__()
            except BaseException:
                self._portal_cm.__exit__(None, None, None)
                self._portal = self._portal_cm = self._session_cm = None
                raise
        return self

    def list_tools(self) -> list[ToolInfo]:
        return self._call(self._client.list_tools)

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> CallToolObservation:
        return self._call(self._client.call_tool, name, arguments)

    def close(self) -> None:
        session_cm, portal_cm = self._session_cm, self._portal_cm
        self._session_cm = self._portal_cm = self._portal = None
        try:
            if session_cm is not None:
                session_cm.__exit__(None, None, None)
        finally:
            if portal_cm is not None:
                portal_cm.__exit__(None, None, None)

    def _call(self, fn: Any, *args: Any) -> Any:
        self.connect()
        assert self._portal is not None
        return self._portal.call(fn, *args)

    def __enter__(self) -> Self:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _tool_info(tool: types.Tool) -> ToolInfo:
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
    )
    return ToolInfo(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=tool.output_schema,
        annotations=annotations,
    )


def _observation(
    name: str, result: types.CallToolResult, output_schema: dict[str, Any] | None
) -> CallToolObservation:
    blocks = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content
    ]
    structured = result.structured_content
    if result.is_error:
        return CallToolObservation(tool_name=name, error=_error_info(structured, blocks))
    if structured is None:
        return CallToolObservation(tool_name=name, result=blocks)
    if output_schema is not None and output_schema.get(WRAP_KEY):
        return CallToolObservation(tool_name=name, result=structured.get("result"))
    return CallToolObservation(tool_name=name, result=structured)


def _error_info(structured: dict[str, Any] | None, blocks: list[dict[str, Any]]) -> ToolErrorInfo:
    """An `isError` result as `ToolErrorInfo`: mcpgym servers send `{"error_type", "message",
    ...}` as structured content, or as JSON text when the tool has an output schema."""
    text = " ".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    payload: Any = structured
    if payload is None:
        try:
            payload = json.loads(text)
        except ValueError:
            payload = None
    if not isinstance(payload, dict) or payload.get("error_type") not in _ERROR_TYPES:
        payload = {"error_type": "execution_error", "message": text or "the tool failed"}
    return ToolErrorInfo.model_validate(payload)


_ERROR_TYPES = ("tool_not_found", "invalid_args", "execution_error", "timeout")


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside `exc` (the mcp client nests task-group errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # pyright: ignore[reportUnknownMemberType]
        exc = exc.exceptions[0]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return exc  # pyright: ignore[reportUnknownVariableType]
