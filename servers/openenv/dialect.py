"""OpenEnv 0.10.0's HTTP MCP dialect, served on `/mcp` beside spec MCP.

OpenEnv's `MCPToolClient` does not speak Streamable HTTP. It POSTs bare JSON-RPC to `/mcp`:
`openenv/session/create` (→ `{"session_id"}`), then `tools/list` / `tools/call` carrying
`params.session_id`, and `openenv/session/close` at the end. When used as a context manager it
also opens `/ws?session_id=<id>`, a WebSocket attached to that same session. Its `call_tool`
returns `result["data"]` and raises on a JSON-RPC error.

The request itself tells the dialects apart (`claims`): spec MCP sends `initialize` first and then
an `Mcp-Session-Id` header, and its clients accept `text/event-stream`; an OpenEnv request has no
session header and uses an `openenv/*` method, a `params.session_id`, or plain-JSON `tools/*`.

Nothing here dispatches a tool: every `tools/*` request goes to the app's `Dispatcher` (its MCP
handler, the one the WebSocket `mcp` frame uses), so tools, mode tags, argument validation and
error mapping are the other transports'. Auth, Origin and body limits are checked by `/mcp` before
this module sees the request. Simulation sessions are `SessionManager` sessions (capacity, idle
reaping, `env.close()`); in production a session is a lease on the principal's live instance,
bounded by `max_sessions` and dropped when idle. The dialect's wire shapes (what it claims, its
envelopes, the result rewrite) are pure functions in servers/openenv/wire.py.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketState

from mcpgym.errors import CapacityReached, MCPGymError, QuotaReached, SessionError
from mcpgym.servers import wire_json
from mcpgym.servers.dispatch import Dispatcher, error_frame
from mcpgym.servers.guards.principals import ProductionEnvs
from mcpgym.servers.guards.security import check_bearer, origin_allowed
from mcpgym.servers.openenv.wire import (
    INTERNAL,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    TOOLS,
    asks_for_episode,
    claims,
    error,
    host_allowed,
    openenv_call_result,
    result,
)
from mcpgym.servers.sessions import Session, SessionManager
from mcpgym.servers.settings import ServerSettings
from mcpgym.tools import WRAP_KEY

__all__ = [
    "OpenEnvDialect",
    "answer_openenv",
    "attached_only",
    "claims",
    "host_allowed",
    "websocket_attach",
]


@dataclass(eq=False, slots=True)
class _Lease:
    """One OpenEnv session: who opened it, and (simulation) its own environment session."""

    token: str
    session: Session | None
    last_active: float
    websocket: WebSocket | None = None


class OpenEnvDialect:
    """The OpenEnv sessions of one app, and the JSON-RPC answers to its dialect."""

    def __init__(
        self,
        *,
        settings: ServerSettings,
        sessions: SessionManager,
        dispatcher: Dispatcher,
        production: ProductionEnvs | None,
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.dispatcher = dispatcher
        self.production = production
        self._leases: dict[str, _Lease] = {}

    @classmethod
    def of(cls, app: Any) -> OpenEnvDialect:
        """The app's dialect, built on first use from what `create_app` keeps on `app.state`."""
        state = app.state
        dialect: OpenEnvDialect | None = getattr(state, "openenv", None)
        if dialect is None:
            dialect = cls(
                settings=state.settings,
                sessions=state.sessions,
                dispatcher=state.dispatcher,
                production=state.production,
            )
            state.openenv = dialect
        return dialect

    def __len__(self) -> int:
        self._drop_idle()
        return len(self._leases)

    # -- JSON-RPC --------------------------------------------------------------------------------

    async def answer(self, message: dict[str, Any], token: str) -> dict[str, Any]:
        """The JSON-RPC response to one OpenEnv request made with bearer `token`."""
        rid = message.get("id")
        method = message.get("method")
        params: Any = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error(rid, INVALID_PARAMS, "params must be an object")
        params = dict(params)  # pyright: ignore[reportUnknownArgumentType]
        try:
            if method == "openenv/session/create":
                return result(rid, {"session_id": await self._create(token)})
            if method == "openenv/session/close":
                sid = params.get("session_id")
                if not isinstance(sid, str) or not sid:
                    return error(rid, INVALID_PARAMS, "params.session_id is required")
                await self._close(self._lease(sid, token))
                return result(rid, {"session_id": sid, "closed": True})
            if method not in TOOLS:
                return error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")
            sid = params.pop("session_id", None)
            request = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
            if sid is None:
                response = await self._once(request, token)
            elif not isinstance(sid, str):
                return error(rid, INVALID_PARAMS, "params.session_id must be a string")
            else:
                response = await self._in_lease(self._lease(sid, token), request, token)
        except MCPGymError as err:
            return error(rid, err.jsonrpc_code, err.message, err.to_dict())
        return response

    async def _create(self, token: str) -> str:
        self._drop_idle()
        quota = self.settings.principal_quota
        if token in self.settings.principals and self._held(token) >= quota:
            raise QuotaReached(
                f"this principal holds {quota} OpenEnv sessions, its quota; close one first",
                quota=quota,
            )
        if self.production is not None:
            if len(self._leases) >= self.settings.max_sessions:
                raise CapacityReached(
                    f"server is at capacity ({self.settings.max_sessions} sessions); retry later",
                    max_sessions=self.settings.max_sessions,
                )
            session = None
        else:
            session = await self.sessions.open(transport="openenv")
            try:
                await session.env.areset()
            except BaseException:
                await self.sessions.close(session)
                raise
            session.started = True
        sid = secrets.token_urlsafe(18)  # a capability: never a guessable counter
        lease = _Lease(token=token, session=session, last_active=time.monotonic())
        if session is not None:
            session.on_reap = lambda: self._detach_socket(lease)
        self._leases[sid] = lease
        return sid

    def _held(self, token: str) -> int:
        return sum(1 for lease in self._leases.values() if lease.token == token)

    def _lease(self, sid: str, token: str) -> _Lease:
        """The live lease `sid` opened with `token` (another principal's id is unknown here)."""
        self._drop_idle()
        lease = self._leases.get(sid)
        if lease is None or not hmac.compare_digest(lease.token.encode(), token.encode()):
            raise SessionError(f"Unknown session_id: {sid}", session_id=sid)
        if lease.session is not None and lease.session.closed:  # reaped by the session manager
            self._leases.pop(sid, None)
            raise SessionError(f"Unknown session_id: {sid}", session_id=sid)
        lease.last_active = time.monotonic()
        return lease

    async def _close(self, lease: _Lease) -> None:
        for sid, held in list(self._leases.items()):
            if held is lease:
                del self._leases[sid]
        await self._detach_socket(lease)
        if lease.session is not None:
            await self.sessions.close(lease.session)

    @staticmethod
    async def _detach_socket(lease: _Lease) -> None:
        ws, lease.websocket = lease.websocket, None
        if ws is not None and ws.application_state == WebSocketState.CONNECTED:
            try:
                await ws.close(code=1000, reason="session closed")
            except Exception:  # the peer may already be gone
                return

    def _drop_idle(self) -> None:
        """Forget production leases idle past the timeout (simulation ones the reaper closes)."""
        deadline = time.monotonic() - self.settings.idle_timeout_s
        for sid, lease in list(self._leases.items()):
            gone = lease.session.closed if lease.session is not None else False
            if gone or (lease.session is None and lease.last_active < deadline):
                del self._leases[sid]

    async def _session_for(self, lease: _Lease | None, token: str) -> Session:
        if lease is not None and lease.session is not None:
            return lease.session
        assert self.production is not None
        env = await self.production.for_token(token)
        return Session(id="openenv", env=env, transport="openenv", started=True)

    async def _in_lease(self, lease: _Lease, request: dict[str, Any], token: str) -> dict[str, Any]:
        session = await self._session_for(lease, token)
        return await self._dispatch(session, request)

    async def _once(self, request: dict[str, Any], token: str) -> dict[str, Any]:
        """A request without a session: production's live instance, or a fresh one (as OpenEnv)."""
        if self.production is not None:
            return await self._dispatch(await self._session_for(None, token), request)
        session = await self.sessions.open(transport="openenv")
        try:
            await session.env.areset()
            session.started = True
            return await self._dispatch(session, request)
        finally:
            await self.sessions.close(session)

    async def _dispatch(self, session: Session, request: dict[str, Any]) -> dict[str, Any]:
        handler = self.dispatcher.mcp_handler
        if handler is None:
            raise SessionError("this server has no MCP tools")
        session.busy += 1
        session.touch()
        try:
            response = await handler(session, request)
        finally:
            session.busy -= 1
            session.touch()
        response = response or result(request.get("id"), {})
        if request["method"] != "tools/call":
            return response
        name = request["params"].get("name")
        spec: Any = getattr(session.env, "tool_specs", {}).get(name)
        schema: Any = getattr(spec, "output_schema", None)
        return openenv_call_result(response, name, bool(schema and schema.get(WRAP_KEY)))

    # -- the WebSocket attached to a session (`/ws?session_id=`) --------------------------------

    async def attach(self, websocket: WebSocket) -> None:
        """Serve `/ws?session_id=ID`: OpenEnv frames on the session's own environment.

        In production the socket carries only `mcp` and `close` frames: episodes are not a
        client's to control there (DESIGN §3), so `reset`/`step`/`state` get `SESSION_ERROR`.
        """
        if not origin_allowed(websocket.headers.get("origin"), self.settings):
            await websocket.close(code=1008, reason="Origin not allowed")
            return
        token = check_bearer(websocket.headers, self.settings)
        sid = websocket.query_params.get("session_id", "")
        try:
            if token is None:
                raise SessionError("missing or invalid bearer token")
            lease = self._lease(sid, token)
            if lease.websocket is not None:
                raise SessionError(f"session {sid} already has a WebSocket attached")
        except SessionError:
            await websocket.close(code=1008, reason="unknown session or bad token")
            return
        await websocket.accept()
        lease.websocket = websocket
        session = await self._session_for(lease, token)
        try:
            await self._serve_frames(websocket, lease, session)
        finally:
            if lease.websocket is websocket:
                lease.websocket = None
            if websocket.application_state == WebSocketState.CONNECTED:
                try:
                    await websocket.close()
                except Exception:
                    return

    async def _serve_frames(self, websocket: WebSocket, lease: _Lease, session: Session) -> None:
        while True:
            try:
                message = await websocket.receive()
            except Exception:
                return
            if message["type"] == "websocket.disconnect":
                return
            text: str | bytes = message.get("text") or message.get("bytes") or b""
            lease.last_active = time.monotonic()
            if lease.session is None and asks_for_episode(text):
                err = SessionError(
                    "production mode: episodes are not controlled by clients; call tools "
                    "over /mcp (tools/list, tools/call)"
                )
                reply, close_after = error_frame(err), False
            else:
                session.busy += 1
                session.touch()
                try:
                    reply, close_after = await self.dispatcher.handle_text(session, text)
                finally:
                    session.busy -= 1
                    session.touch()
            if session.closed or lease.websocket is not websocket:
                return
            if reply is not None:
                await websocket.send_text(_encode(reply))
            if close_after:
                return


def _encode(reply: dict[str, Any]) -> str:
    try:
        return wire_json.dumps(reply)
    except (TypeError, ValueError) as exc:  # an environment put NaN or an object in a reply
        return wire_json.dumps(error_frame(SessionError(f"the reply is not JSON: {exc}")))


async def answer_openenv(
    scope: Scope,
    receive: Receive,
    send: Send,
    message: Any,
    token: str,
    allowed_hosts: Sequence[str],
) -> None:
    """The `/mcp` hook: answer one OpenEnv request (`message`, parsed strictly by `/mcp`).

    The `Host` header is checked as the spec transport checks it (`allowed_hosts`, 421
    otherwise).
    """
    headers = Headers(scope=scope)
    if not host_allowed(headers.get("host"), allowed_hosts):
        reply = error(message.get("id"), -32600, "Invalid Host header")
        await _reply(reply, 421)(scope, receive, send)
        return
    response = await OpenEnvDialect.of(scope["app"]).answer(message, token)
    await _reply(response)(scope, receive, send)


def _reply(content: dict[str, Any], status: int = 200) -> Response:
    """Strict JSON (mcpgym.servers.responses is not imported here: production stays lean)."""
    try:
        body = wire_json.dumps(content)
    except (TypeError, ValueError) as exc:  # an environment put NaN or an object in a result
        body = wire_json.dumps(error(content.get("id"), INTERNAL, f"the reply is not JSON: {exc}"))
    return Response(body.encode("utf-8"), status, media_type="application/json")


async def websocket_attach(websocket: WebSocket) -> None:
    """The `/ws?session_id=` hook: attach the socket to an OpenEnv session."""
    await OpenEnvDialect.of(websocket.app).attach(websocket)


async def attached_only(websocket: WebSocket) -> None:
    """Production `/ws` when the operator did not enable it: only `?session_id=` attachments."""
    if "session_id" in websocket.query_params:
        await websocket_attach(websocket)
    else:
        await websocket.close(code=1008, reason="/ws is not enabled in production mode")
