"""`/mcp`: Streamable HTTP from the official `mcp` package, behind our Origin and bearer checks.

The session manager (`build_session_manager`) serves both protocol eras (2025-11-25 sessions and
2026-07-28 stateless requests), with JSON or SSE responses as the tools need (`json_responses`).
In front of it, `McpEndpoint` answers a bad `Origin` with 403 and a missing or wrong token with
401 *before* the manager looks at session ids, refuses JSON-RPC batches (400, -32600) in both
eras, strips optional whitespace around header values, and in production picks the principal's
environment. OpenEnv's bare JSON-RPC dialect is answered beside spec MCP
(servers/openenv/dialect.py).
"""

from __future__ import annotations

# First: `mcp` then loads without its client side (servers/mcp/lean.py).
from mcpgym.servers.mcp import lean as mcp_lean  # noqa: F401  # pyright: ignore[reportUnusedImport]

# isort: split

import inspect
import json
from collections.abc import Mapping
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from mcpgym.errors import InvalidJSON, MCPGymError
from mcpgym.servers.guards.principals import ProductionEnvs
from mcpgym.servers.guards.security import (
    bearer_role,
    check_bearer,
    forbidden,
    forbidden_origin,
    origin_allowed,
    unauthorized,
)
from mcpgym.servers.mcp.episode_query import EpisodeQueryError, episode_query
from mcpgym.servers.mcp.episodes import McpEpisodes
from mcpgym.servers.mcp.gate import bad_id, owner_key, read_body, rpc_refusal
from mcpgym.servers.mcp.server import CURRENT_ENV, PRINCIPAL_RESET
from mcpgym.servers.mcp.session_count import SessionCount
from mcpgym.servers.openenv.dialect import answer_openenv, claims
from mcpgym.servers.sessions import SessionManager
from mcpgym.servers.settings import ServerSettings

__all__ = [
    "McpEndpoint",
    "build_session_manager",
    "check_bearer",
    "json_responses",
    "origin_allowed",
    "security_settings",
]

_LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _rpc_error(message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32602, "message": message}}


def security_settings(settings: ServerSettings) -> TransportSecuritySettings:
    """DNS-rebinding protection: loopback hosts and origins plus the configured ones."""
    hosts = [f"{h}:*" for h in _LOCAL_HOSTS] + list(_LOCAL_HOSTS) + list(settings.allowed_hosts)
    origins = [f"http://{h}:*" for h in _LOCAL_HOSTS] + [f"http://{h}" for h in _LOCAL_HOSTS]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=origins + list(settings.allowed_origins),
    )


def json_responses(tool_specs: Mapping[str, Any] | None) -> bool:
    """Whether `/mcp` answers requests with plain JSON bodies rather than SSE streams.

    JSON is the fastest, but it has no back channel: a request's SSE stream is where its log and
    progress notifications and its sampling and elicitation requests travel. So JSON is used
    only when no tool takes a `ToolContext` (`spec.context_param`); when the tools are not known
    up front (a factory was given), SSE keeps every feature working.
    """
    if tool_specs is None:
        return False
    return all(getattr(spec, "context_param", None) is None for spec in tool_specs.values())


def build_session_manager(
    server: Server[Any], settings: ServerSettings, tool_specs: Mapping[str, Any] | None
) -> StreamableHTTPSessionManager:
    """The `mcp` package's Streamable HTTP session manager for `/mcp` (both protocol eras).

    Stateful 2025-11-25 sessions (one per `Mcp-Session-Id`, reaped after the idle timeout,
    `max_sessions` at most), DNS-rebinding protection, the body limit, and JSON or SSE
    responses as `json_responses` decides. A manager runs once: build one per app.
    """
    # mcp >= 2.2 caps transport sessions itself; on 2.0/2.1 the cap is mcpgym's SessionManager's
    # (simulation: one environment per MCP connection, `max_sessions` at most).
    cap: dict[str, Any] = (
        {"max_sessions": settings.max_mcp_sessions or settings.max_sessions}
        if "max_sessions" in inspect.signature(StreamableHTTPSessionManager.__init__).parameters
        else {}
    )
    return StreamableHTTPSessionManager(
        app=server,
        json_response=json_responses(tool_specs),
        stateless=False,
        security_settings=security_settings(settings),
        session_idle_timeout=settings.idle_timeout_s,
        max_request_body_size=settings.max_frame_bytes,
        **cap,
    )


def _without_ows(scope: Scope) -> Scope:
    """The scope with surrounding whitespace removed from header values.

    RFC 9110 §5.5: optional whitespace around a field value is not part of it. Some servers
    (httptools) pass it through, and the `mcp` package then compares `Mcp-Name: " x "` with the
    body's `"x"` literally.
    """
    raw: list[tuple[bytes, bytes]] = scope["headers"]
    for _, value in raw:  # a loop, not `any(<generator>)`: this runs on every request
        if value[:1] in _OWS or value[-1:] in _OWS:
            return {**scope, "headers": [(name, value.strip(b" \t")) for name, value in raw]}
    return scope


_OWS = (b" ", b"\t")
_SID = b"mcp-session-id"


def _json_errors(send: Send, fresh: bool) -> Send:
    """`send`, with the `mcp` package's plain-text error bodies (400 bad Content-Type, 413 body
    too large, 421 bad Host, ...) rewritten as JSON-RPC error objects: every error body is JSON.
    A refused `fresh` request (one naming no session) gets no `Mcp-Session-Id`: the package
    writes the id of a session it never kept, which a client would then send back."""
    held: Message | None = None
    chunks: list[bytes] = []

    async def wrapped(message: Message) -> None:
        nonlocal held
        if message["type"] == "http.response.start" and message["status"] >= 400:
            if fresh:
                raw = message.get("headers", [])
                message = {**message, "headers": [h for h in raw if h[0].lower() != _SID]}
            kind = Headers(raw=message.get("headers", [])).get("content-type", "")
            if not kind.startswith(("application/json", "text/event-stream")):
                held = message
                return
        if held is None:
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body"):
            return
        text = b"".join(chunks).decode("utf-8", "replace").strip() or "request refused"
        body = json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": text}}
        ).encode()
        headers = [
            (k, v)
            for k, v in held.get("headers", [])
            if k.lower() not in (b"content-type", b"content-length")
        ]
        headers += [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({**held, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return wrapped


class McpEndpoint:
    """ASGI endpoint for `/mcp` (see the module docstring for what it checks, in order)."""

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        settings: ServerSettings,
        production: ProductionEnvs | None,
        count: SessionCount | None = None,
    ) -> None:
        self.manager = manager
        self.settings = settings
        self.production = production
        self.count = count if count is not None else SessionCount(settings)
        self._hosts = tuple(security_settings(settings).allowed_hosts)

    def _episode(self, scope: Scope) -> str | None:
        """The live episode `/mcp?episode=ID` names (checked here, bound per request by the
        MCP server's middleware), or `None`; `EpisodeQueryError` when it names none."""
        named = episode_query(scope.get("query_string", b""))
        if named is None:
            return None
        sessions = getattr(scope["app"].state, "sessions", None)
        if self.production is not None or not isinstance(sessions, SessionManager):
            raise EpisodeQueryError("this /mcp has no episodes: they are a simulation option", 400)
        McpEpisodes.of(sessions).live(named)
        return named

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = _without_ows(scope)
        headers = Headers(scope=scope)
        if not origin_allowed(headers.get("origin"), self.settings):
            await forbidden_origin()(scope, receive, send)
            return
        try:  # an operator-opened episode (servers/mcp/episodes.py): its id is a credential
            named = self._episode(scope)
        except EpisodeQueryError as err:
            await JSONResponse(_rpc_error(err.message), status_code=err.status)(
                scope, receive, send
            )
            return
        found = bearer_role(headers, self.settings)
        if found is None and named is None:
            await unauthorized()(scope, receive, send)
            return
        role, token = found or ("anonymous", "")
        if role == "operator" and self.settings.principals and named is None:
            # the operator token is infrastructure with no identity of its own (security.md)
            message = "the operator token opens /ws only; call tools with a principal token"
            await forbidden(message)(scope, receive, send)
            return
        owner = owner_key(role, token, named)
        sid = headers.get("mcp-session-id")
        if sid is not None and self.count.owner_of(sid) not in (None, owner):
            # another credential's session: answered as the manager answers an unknown one
            await rpc_refusal(scope, receive, send, 404, -32600, "Session not found")
            return
        if scope["method"] == "POST":
            body = await read_body(receive, self.settings.max_frame_bytes)
            receive = body.replay()
            try:
                message = body.parse()
            except InvalidJSON as err:
                await rpc_refusal(scope, receive, send, 400, -32700, f"Parse error: {err.message}")
                return
            if isinstance(message, list):  # a JSON-RPC batch, which MCP removed
                text = "Invalid Request: batches are not supported"
                await rpc_refusal(scope, receive, send, 400, -32600, text)
                return
            if bad_id(message):
                text = "Invalid Request: id must be a string, an integer or null"
                await rpc_refusal(scope, receive, send, 400, -32600, text)
                return
            if sid is None and named is None and claims(headers, message):  # OpenEnv's dialect
                await answer_openenv(scope, receive, send, message, token, self._hosts)
                return
            if (
                sid is None
                and role == "principal"
                and isinstance(message, dict)
                and message.get("method") == "initialize"  # pyright: ignore[reportUnknownMemberType]
                and self.count.owned(owner) >= self.settings.principal_quota
            ):
                quota = self.settings.principal_quota
                text = f"this principal holds {quota} MCP sessions, its quota; end one first"
                await rpc_refusal(
                    scope, receive, send, 429, -32000, text, headers={"Retry-After": "1"}
                )
                return
        reset = identity = None
        if self.production is not None:
            try:
                env = await self.production.for_token(token)
            except Exception as err:  # the instance would not build (e.g. a principal's reset
                # options name a user the world lacks): the server's fault, answered as JSON
                why = err.message if isinstance(err, MCPGymError) else type(err).__name__
                text = f"this principal's environment is unavailable: {why}"
                await rpc_refusal(scope, receive, send, 503, -32603, text[:500])
                return
            reset = CURRENT_ENV.set(env)
        elif role == "principal":  # simulation: the connection's instance acts as the principal
            identity = PRINCIPAL_RESET.set(dict(self.settings.principals.get(token, {})))
        try:
            await self.count.serve(
                self._manager, scope, receive, _json_errors(send, sid is None), owner=owner
            )
        finally:
            if reset is not None:
                CURRENT_ENV.reset(reset)
            if identity is not None:
                PRINCIPAL_RESET.reset(identity)

    async def _manager(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)
