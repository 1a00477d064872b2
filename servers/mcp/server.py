"""The environment's tools as a real MCP server, on the official `mcp` package's low-level `Server`.

One `Server` object serves every MCP transport (Streamable HTTP on `/mcp`, stdio, and the WebSocket
`mcp` frame). Which environment instance answers is decided per request:

- a transport that already knows it (a WebSocket session, the production service, stdio) sets
  `CURRENT_ENV` before handing the request over;
- otherwise (simulation `/mcp`) each MCP connection gets its own instance from the session manager:
  a stateful session keeps one for its lifetime, a stateless request gets a fresh one.

Tools run with a `SessionToolContext` (servers/mcp/context.py) as their `ToolContext`; the
2026-07-28 request state it uses for multi-round questions is sealed by `RequestStateBoundary`
(servers/mcp/request_state.py).
Content values become MCP content blocks (`tool_result`); tool failures become `isError` results
(`error_result`); an unknown or hidden tool is JSON-RPC -32602.
"""

from __future__ import annotations

# First: `mcp` then loads without its client side (servers/mcp/lean.py).
from mcpgym.servers.mcp import lean as mcp_lean  # noqa: F401  # pyright: ignore[reportUnusedImport]

# isort: split

import contextvars
import functools
import inspect
import json
import warnings
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from mcpgym._hints import exception_text
from mcpgym.content import ContentBlocks
from mcpgym.context import use_context
from mcpgym.errors import MCPGymError, ToolError, ToolNotFound
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.runtime import crashes
from mcpgym.servers.mcp.context import (
    LOG_LEVEL_KEY,
    CapabilityMissing,
    InputRequired,
    SessionToolContext,
    mcp_connection,
)
from mcpgym.servers.mcp.episode_query import EpisodeQueryError, episode_query
from mcpgym.servers.mcp.episodes import McpEpisodes
from mcpgym.servers.mcp.request_state import request_state_middleware
from mcpgym.servers.sessions import Session, SessionManager
from mcpgym.servers.wire_json import DEFAULT_MAX_RESULT_BYTES, check_result, encode_reply

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["CURRENT_ENV", "PRINCIPAL_RESET", "build_mcp_server", "error_result", "tool_result"]

CURRENT_ENV: contextvars.ContextVar[MCPEnvironment | None] = contextvars.ContextVar(
    "mcpgym_current_env", default=None
)
PRINCIPAL_RESET: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "mcpgym_principal_reset", default=None
)
"""Simulation: the reset options of the principal whose token opened this MCP connection (its
instance acts as the user the principals file names, as in production)."""
_SESSION_KEY = "mcpgym_session"
_content_block: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)
# `json.dumps(value, ensure_ascii=False)` builds this encoder on every call; the text is the same
_json_text = json.JSONEncoder(ensure_ascii=False).encode


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


def tool_result(spec: Any, dumped: Any, text: str | None = None) -> types.CallToolResult:
    """A successful call: content blocks as they are; any other value as JSON text (`text`
    when the caller encoded it already), and as `structuredContent` when typed."""
    if isinstance(dumped, ContentBlocks):
        blocks = [_content_block.validate_python(block) for block in dumped]
        return types.CallToolResult(content=blocks, is_error=False)
    if text is None:
        text = dumped if isinstance(dumped, str) else _json_text(dumped)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=spec.structured(dumped),
        is_error=False,
    )


def error_result(err: ToolError, spec: Any = None) -> types.CallToolResult:
    """A failed call the model can correct itself from: `{"error_type", "message", ...}` as JSON
    text, and as `structuredContent` whenever that does not contradict the output schema.

    Clients such as the MCP Inspector validate `structuredContent` against the tool's output
    schema even on `isError` results, so an error payload the schema rejects would bury the
    error under a schema complaint: then only the JSON text carries it. Tools returning open
    objects (`dict[str, Any]`, as Calendar Gym's) keep the structured error.
    """
    payload = err.to_info()
    text = json.dumps(payload, ensure_ascii=False, default=str)
    structured: dict[str, Any] | None = payload
    if spec is not None and spec.output_schema is not None:
        structured = payload if _output_validator(spec).is_valid(payload) else None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=True,
    )


@functools.lru_cache(maxsize=1024)
def _output_validator(spec: Any) -> Draft202012Validator:
    from jsonschema import Draft202012Validator  # ~0.1 s: only once an error meets a schema

    return Draft202012Validator(spec.output_schema)


def build_mcp_server(
    *,
    name: str,
    version: str,
    instructions: str | None,
    tool_specs: Callable[[], dict[str, Any]],
    mode: str,
    sessions: SessionManager | None,
    default_env: Callable[[], Awaitable[MCPEnvironment]] | None = None,
    timeout_s: float | None = None,
    asks_client: bool = True,
    max_result_bytes: int | None = DEFAULT_MAX_RESULT_BYTES,
) -> Server[Any]:
    """Build the low-level MCP `Server` for an environment.

    Args:
        tool_specs: returns the environment class's `ToolSpec`s (for `tools/call` header checks).
        mode: the server mode; only tools visible in it exist.
        sessions: where simulation-mode MCP connections get their own environment instance.
        default_env: the instance used when no transport set one (the production service).
        timeout_s: the per-call limit of every tool call (the server's `step_timeout_s`); MCP
            has no per-request timeout of its own.
        asks_client: whether a tool may ask the client mid-call (takes a `ToolContext`; `True`
            when the tools are not known up front): only then can a `requestState` be minted
            (servers/mcp/request_state.py).
        max_result_bytes: the largest result a call returns (servers/wire_json.py); a larger
            one is a `RESULT_TOO_LARGE` tool error. `None`: no cap.
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

    async def on_call_tool(
        ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        env = await resolve(ctx)
        try:
            spec = env.get_tool(params.name)
        except ToolNotFound as err:
            raise MCPError(
                code=types.INVALID_PARAMS, message=err.message, data=err.detail
            ) from None
        try:
            arguments = dict(params.arguments or {})
            if spec.context_param is None:  # the common case: nothing to hand the tool
                dumped = await env.invoke_tool(params.name, arguments, timeout_s)
            else:
                with use_context(SessionToolContext(ctx, params)):
                    dumped = await env.invoke_tool(params.name, arguments, timeout_s)
            big = await check_result(dumped, max_result_bytes, params.name)
        except InputRequired as ask:  # 2026-07-28: the client answers, then calls again
            return ask.result()
        except CapabilityMissing as err:
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                raise err.as_mcp_error() from None
            return error_result(err, spec)
        except ToolError as err:
            return error_result(err, spec)
        except Exception as exc:  # never leak a traceback into the protocol (it goes to the log)
            detail = crashes.record(
                env, f"{type(env).__name__}.{params.name} (tool)", exc, **crashes.TOOL
            )
            return error_result(ToolError(exception_text(exc), tool=params.name, **detail), spec)
        if big and not isinstance(dumped, str | ContentBlocks):  # encoded off the loop
            return tool_result(spec, dumped, await encode_reply(dumped, _json_text))
        return tool_result(spec, dumped)

    async def on_set_logging_level(
        ctx: Any, params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        _connection_state(ctx)[LOG_LEVEL_KEY] = params.level
        return types.EmptyResult()

    with warnings.catch_warnings():
        # Logging is deprecated in 2026-07-28 but part of 2025-11-25, which we serve too.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        # mcp >= 2.1 checks `tools/call` Mcp-Param headers through `get_tool_input_schema`;
        # 2.0 finds the schema through `tools/list` instead, which answers the same.
        extra: dict[str, Any] = (
            {"get_tool_input_schema": input_schema}
            if "get_tool_input_schema" in inspect.signature(Server.__init__).parameters
            else {}
        )
        server: Server[Any] = Server(  # pyright: ignore[reportDeprecated]
            name,
            version=version,
            instructions=instructions,
            **extra,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_set_logging_level=on_set_logging_level,
        )
    # Seals the 2026-07-28 requestState that carries earlier answers (AES-GCM under a key of this
    # process): a client cannot read or forge it, and state from another process is refused.
    server.middleware.append(request_state_middleware(name, asks_client=asks_client))
    if sessions is not None and default_env is None:
        server.middleware.append(_per_connection_env(sessions))
    return server


def _connection_state(ctx: Any) -> dict[str, Any]:
    return mcp_connection(ctx).state


def _per_connection_env(sessions: SessionManager) -> ServerMiddleware[Any]:
    """Middleware: give each MCP connection its own environment, closed when the connection ends;
    a request naming an operator-opened episode (`/mcp?episode=ID`) gets that episode's."""

    episodes = McpEpisodes.of(sessions)

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if CURRENT_ENV.get() is None:
            # `/mcp?episode=ID` (servers/mcp/episodes.py): every request naming an operator-opened
            # episode plays that instance, whatever connection or protocol era it comes on
            scope: dict[str, Any] = getattr(ctx.request, "scope", None) or {}
            try:
                named = episode_query(scope.get("query_string", b""))
                episode = None if named is None else episodes.live(named)
            except EpisodeQueryError as err:
                raise MCPError(code=types.INVALID_PARAMS, message=err.message) from None
            if episode is not None:
                bound = CURRENT_ENV.set(episode.env)
                try:
                    return await call_next(ctx)
                finally:
                    CURRENT_ENV.reset(bound)
            conn = mcp_connection(ctx)
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
                    await session.env.areset(**(PRINCIPAL_RESET.get() or {}))
                    session.started = True
                except MCPGymError as err:
                    raise MCPError(
                        code=err.jsonrpc_code, message=err.message, data=err.to_dict()
                    ) from None
        return await call_next(ctx)

    return middleware
