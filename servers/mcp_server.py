"""The environment's tools as a real MCP server, on the official `mcp` package's low-level `Server`.

One `Server` object serves every MCP transport (Streamable HTTP on `/mcp`, stdio, and the WebSocket
`mcp` frame). Which environment instance answers is decided per request:

- a transport that already knows it (a WebSocket session, the production service, stdio) sets
  `CURRENT_ENV` before handing the request over;
- otherwise (simulation `/mcp`) each MCP connection gets its own instance from the session manager:
  a stateful session keeps one for its lifetime, a stateless request gets a fresh one.
"""

from __future__ import annotations

import contextvars
import json
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel, TypeAdapter

from mcpgym.content import ContentBlocks
from mcpgym.context import (
    LOG_LEVELS,
    Elicitation,
    LogLevel,
    ToolContext,
    elicitation_schema,
    use_context,
)
from mcpgym.errors import MCPGymError, ToolError, ToolExecutionError, ToolNotFound
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.sessions import Session, SessionManager

__all__ = ["CURRENT_ENV", "SessionToolContext", "build_mcp_server", "tool_result"]

CURRENT_ENV: contextvars.ContextVar[MCPEnvironment | None] = contextvars.ContextVar(
    "mcpgym_current_env", default=None
)
_SESSION_KEY = "mcpgym_session"
_LOG_LEVEL_KEY = "mcpgym_log_level"
_R = TypeVar("_R", bound=BaseModel)
_content_block: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)


def _as_tool(spec: Any) -> types.Tool:
    annotations = (
        types.ToolAnnotations.model_validate(spec.annotations) if spec.annotations else None
    )
    return types.Tool(
        name=spec.name,
        description=spec.description or None,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=annotations,
    )


def tool_result(spec: Any, dumped: Any) -> types.CallToolResult:
    """A successful call: content blocks as they are; any other value as JSON text, and as
    `structuredContent` when typed."""
    if isinstance(dumped, ContentBlocks):
        blocks = [_content_block.validate_python(block) for block in dumped]
        return types.CallToolResult(content=blocks, is_error=False)
    text = dumped if isinstance(dumped, str) else json.dumps(dumped, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=spec.structured(dumped),
        is_error=False,
    )


def error_result(err: ToolError) -> types.CallToolResult:
    """A failed call the model can correct itself from: the error as JSON text and structured."""
    payload = err.to_info()
    return types.CallToolResult(
        content=[
            types.TextContent(
                type="text", text=json.dumps(payload, ensure_ascii=False, default=str)
            )
        ],
        structured_content=payload,
        is_error=True,
    )


def build_mcp_server(
    *,
    name: str,
    version: str,
    instructions: str | None,
    tool_specs: Callable[[], dict[str, Any]],
    mode: str,
    sessions: SessionManager | None,
    default_env: Callable[[], Awaitable[MCPEnvironment]] | None = None,
) -> Server[Any]:
    """Build the low-level MCP `Server` for an environment.

    Args:
        tool_specs: returns the environment class's `ToolSpec`s (for `tools/call` header checks).
        mode: the server mode; only tools visible in it exist.
        sessions: where simulation-mode MCP connections get their own environment instance.
        default_env: the instance used when no transport set one (the production service).
    """

    def input_schema(tool_name: str) -> dict[str, Any] | None:
        spec = tool_specs().get(tool_name)
        return spec.input_schema if spec is not None and spec.visible_in(mode) else None

    async def resolve(ctx: Any) -> MCPEnvironment:
        env = CURRENT_ENV.get()
        if env is not None:
            return env
        if default_env is not None:
            return await default_env()
        session: Session | None = _connection_state(ctx).get(_SESSION_KEY)
        if session is None:
            raise MCPError(code=types.INTERNAL_ERROR, message="no environment for this connection")
        env = session.env
        if not isinstance(env, MCPEnvironment):
            raise MCPError(code=types.INTERNAL_ERROR, message="the environment has no tools")
        session.touch()
        return env

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        env = await resolve(ctx)
        return types.ListToolsResult(tools=[_as_tool(s) for s in env.visible_tools()])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        env = await resolve(ctx)
        try:
            spec = env.get_tool(params.name)
        except ToolNotFound as err:
            raise MCPError(
                code=types.INVALID_PARAMS, message=err.message, data=err.detail
            ) from None
        try:
            with use_context(SessionToolContext(ctx)):
                dumped = await env.call_tool(params.name, dict(params.arguments or {}))
        except ToolError as err:
            return error_result(err)
        except Exception as exc:  # never leak a traceback into the protocol
            return error_result(ToolError(f"{type(exc).__name__}: {exc}", tool=params.name))
        return tool_result(spec, dumped)

    async def on_set_logging_level(
        ctx: Any, params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        _connection_state(ctx)[_LOG_LEVEL_KEY] = params.level
        return types.EmptyResult()

    with warnings.catch_warnings():
        # Logging is deprecated in 2026-07-28 but part of 2025-11-25, which we serve too.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server: Server[Any] = Server(  # pyright: ignore[reportDeprecated]
            name,
            version=version,
            instructions=instructions,
            get_tool_input_schema=input_schema,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_set_logging_level=on_set_logging_level,
        )
    if sessions is not None and default_env is None:
        server.middleware.append(_per_connection_env(sessions))
    return server


def _connection_state(ctx: Any) -> dict[str, Any]:
    # mcp 2.3.0 keeps the per-connection state and exit stack on a private attribute; the version
    # is pinned and tests/servers/test_mcp_http.py fails loudly if this moves.
    return ctx.session._connection.state


def _per_connection_env(sessions: SessionManager) -> ServerMiddleware[Any]:
    """Middleware: give each MCP connection its own environment, closed when the connection ends."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if CURRENT_ENV.get() is None:
            conn = ctx.session._connection
            if _SESSION_KEY not in conn.state:
                try:
                    session = await sessions.open(transport="mcp")
                except MCPGymError as err:
                    raise MCPError(
                        code=err.jsonrpc_code, message=err.message, data=err.to_dict()
                    ) from None
                conn.state[_SESSION_KEY] = session
                conn.exit_stack.push_async_callback(sessions.close, session)
                try:
                    await session.env.areset()
                    session.started = True
                except MCPGymError as err:
                    raise MCPError(
                        code=err.jsonrpc_code, message=err.message, data=err.to_dict()
                    ) from None
        return await call_next(ctx)

    return middleware


class SessionToolContext(ToolContext):
    """The `ToolContext` of a tool called over MCP: talks to the client through the request's
    session. Logs and progress ride the request's own stream; sampling and elicitation are
    requests to the client, which must have declared the capability and be reachable (stdio and
    stateful HTTP sessions are; the WebSocket `mcp` frame and stateless requests are not)."""

    transport = "mcp"

    def __init__(self, request: ServerRequestContext[Any, Any]) -> None:
        super().__init__()
        self._request = request

    async def log(
        self, message: Any, level: LogLevel = "info", *, logger: str | None = None
    ) -> None:
        await super().log(message, level, logger=logger)
        request = self._request
        threshold: LogLevel = _connection_state(request).get(_LOG_LEVEL_KEY, "debug")
        meta: Mapping[str, Any] | None = request.meta
        allowed = allowed_log_levels(request.protocol_version, meta)
        if level not in allowed or LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(level=level, data=message, logger=logger)
        )
        await request.session.send_notification(note, related_request_id=request.request_id)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await super().progress(progress, total, message)
        await self._request.session.report_progress(progress, total, message)

    async def sample(
        self, prompt: str, *, max_tokens: int = 1024, system_prompt: str | None = None
    ) -> str:
        self._require("sampling", types.ClientCapabilities(sampling=types.SamplingCapability()))
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text=prompt)
                    )
                ],
                max_tokens=max_tokens,
                system_prompt=system_prompt,
            )
        )
        result = await self._ask("sampling", request, types.CreateMessageResult)
        content = result.content
        if isinstance(content, types.TextContent):
            return content.text
        return json.dumps(content.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def elicit(
        self, message: str, schema: Mapping[str, Any] | type[BaseModel]
    ) -> Elicitation:
        self._require(
            "elicitation", types.ClientCapabilities(elicitation=types.ElicitationCapability())
        )
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=message, requested_schema=elicitation_schema(schema)
            )
        )
        result = await self._ask("elicitation", request, types.ElicitResult)
        content = dict(result.content) if result.content is not None else None
        return Elicitation(action=result.action, content=content)

    def _require(self, feature: str, capability: types.ClientCapabilities) -> None:
        session = self._request.session
        if not session.check_client_capability(capability):
            raise ToolExecutionError(
                f"this tool needs {feature}; the MCP client did not declare that capability",
                feature=feature,
            )
        if not session.can_send_request:
            raise ToolExecutionError(
                f"this tool needs {feature}, which needs a channel for server-to-client requests; "
                "this connection has none (use stdio or a stateful HTTP session)",
                feature=feature,
            )

    async def _ask(self, feature: str, request: Any, result_type: type[_R]) -> _R:
        metadata = ServerMessageMetadata(related_request_id=self._request.request_id)
        try:
            return await self._request.session.send_request(request, result_type, metadata=metadata)
        except NoBackChannelError:
            raise ToolExecutionError(
                f"this tool needs {feature}; this connection cannot send requests to the client",
                feature=feature,
            ) from None
        except MCPError as err:
            raise ToolExecutionError(
                f"the client refused the {feature} request: {err}", feature=feature, code=err.code
            ) from None
