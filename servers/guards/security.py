"""Who may talk to the server: browser `Origin` checks and bearer tokens (constant-time).

Two kinds of token (DESIGN §10, docs/security.md):

- the **operator** token (`ServerSettings.token`) is infrastructure: it opens `/ws` (in
  production only when `production_ws` is on) and, when no principals are configured, `/mcp`;
- a **principal** token (a key of `ServerSettings.principals`) is an identity: it opens `/mcp`
  only, always as that principal. It never opens `/ws`, where `reset` chooses the episode's
  options (and so, in Calendar Gym, the acting user).

When principals are configured the operator token is refused on `/mcp` (403): it has no identity
of its own, and acting as some default user would be the impersonation this module exists to stop.
Shared by `/mcp`, `/ws` and the harness route; no MCP machinery is imported here.

`BrowserGuard` holds every route of the app to the rules the MCP spec sets for `/mcp`: a
request that changes state (any method but GET, HEAD and OPTIONS, and every WebSocket) from a
browser `Origin` that is not loopback or `--allowed-origin` is refused (403), and a `Host` that
could only come from a DNS-rebinding page is refused (421) on every route (`host_allowed`).
Clients that are not browsers send no `Origin` and pass. A header that names who is asking or
where (`Host`, `Origin`, `Authorization`, `X-API-Key`, a session id) sent twice is refused (400,
RFC 9110 §5.3: they are not lists), so no proxy in front can check one value while this server
acts on the other.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from typing import Literal
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpgym.servers.settings import ServerSettings

__all__ = [
    "BrowserGuard",
    "Role",
    "bearer_role",
    "check_bearer",
    "forbidden",
    "forbidden_origin",
    "host_allowed",
    "no_client_registration",
    "origin_allowed",
    "repeated_header",
    "unauthorized",
]

Role = Literal["anonymous", "operator", "principal"]
"""`anonymous`: no auth is configured; `operator`: the server token; `principal`: a mapped token."""


def origin_allowed(origin: str | None, settings: ServerSettings) -> bool:
    """No Origin (not a browser) passes; a browser origin must be local or configured."""
    if origin is None:
        return True
    if origin in settings.allowed_origins:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and (parts.hostname or "") in (
        "127.0.0.1",
        "localhost",
        "::1",
    )


def host_allowed(host: str | None, settings: ServerSettings) -> bool:
    """Whether a `Host` header may reach the app (the DNS-rebinding guard).

    A rebinding page reaches 127.0.0.1 under a name its author controls, and the browser sends
    that name: a dotted DNS name. So by default the loopback names (`localhost`,
    `*.localhost`), IP literals (an IP is no name anyone rebinds) and single-label names
    (`testserver`, a compose service: no public DNS answers them) pass, and any other name must
    be allowed with `--allowed-host`: `name`, `name:port`, `name:*`, `*.domain` or `*` (all).
    """
    if not host:  # HTTP/1.0 without Host: not a browser
        return True
    allowed = settings.allowed_hosts
    if host in allowed or "*" in allowed:
        return True
    name = _host_name(host)
    if name is None:
        return False
    if any(
        entry == name
        or (entry.endswith(":*") and entry[:-2] == name)
        or (entry.startswith("*.") and name.endswith(entry[1:]))
        for entry in allowed
    ):
        return True
    if name == "localhost" or name.endswith(".localhost") or "." not in name.strip("."):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _host_name(host: str) -> str | None:
    """The name of a `Host` value without its port (`None` when it is malformed)."""
    if host.startswith("["):  # an IPv6 literal: [::1]:8000
        end = host.find("]")
        return host[1:end] if end > 0 else None
    if host.count(":") > 1:  # a bare IPv6 literal, or nothing a browser sends
        try:
            return str(ipaddress.ip_address(host))
        except ValueError:
            return None
    name, _, port = host.partition(":")
    if port and not port.isdigit():
        return None
    return name.lower().rstrip(".") if name else None


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# headers read as one value that decide who is asking, for what: never a list (ASGI lowercases)
_SINGLETONS = frozenset(
    {b"host", b"origin", b"authorization", b"x-api-key", b"mcp-session-id", b"x-session-id"}
)


def repeated_header(raw: list[tuple[bytes, bytes]]) -> str | None:
    """The first singleton header (`_SINGLETONS`) that `raw` holds more than once, else `None`."""
    seen: set[bytes] = set()
    for name, _ in raw:
        if name in _SINGLETONS:
            if name in seen:
                return name.decode("latin-1")
            seen.add(name)
    return None


class BrowserGuard:
    """ASGI wrapper: `Host` checked on every request, `Origin` on every state-changing one."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind in ("http", "websocket"):
            headers = Headers(scope=scope)
            refusal: tuple[int, str, str] | None = None
            twice = repeated_header(scope["headers"])
            if twice is not None:
                refusal = (400, "DUPLICATE_HEADER", f"{twice} sent more than once: send it once")
            elif not host_allowed(headers.get("host"), self.settings):
                refusal = (421, "HOST_NOT_ALLOWED", "Host not allowed: add it with --allowed-host")
            elif (kind == "websocket" or scope["method"] not in _SAFE_METHODS) and not (
                origin_allowed(headers.get("origin"), self.settings)
            ):
                refusal = (403, "FORBIDDEN", "Origin not allowed")
            if refusal is not None:
                await _refuse(kind, scope, send, *refusal)
                return
        await self.app(scope, receive, send)


async def _refuse(kind: str, scope: Scope, send: Send, status: int, code: str, text: str) -> None:
    # `detail` as well: what ORS's and OpenEnv's (FastAPI-shaped) clients print
    body = json.dumps({"error": {"code": code, "message": text}, "detail": text}).encode()
    prefix = "http.response" if kind == "http" else "websocket.http.response"
    if kind == "websocket" and prefix not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": f"{prefix}.start", "status": status, "headers": headers})
    await send({"type": f"{prefix}.body", "body": body})


def bearer_role(headers: Headers, settings: ServerSettings) -> tuple[Role, str] | None:
    """`(role, token)` for the request's bearer token, or `None` when it is missing or wrong.

    Compares in constant time against every configured token (no early exit on a match).
    """
    if not settings.token and not settings.principals:
        return "anonymous", ""
    scheme, _, given = headers.get("authorization", "").partition(" ")
    given = given.strip()
    if scheme.lower() != "bearer" or not given:
        return None
    raw = given.encode()
    found: tuple[Role, str] | None = None
    for token in settings.principals:
        if hmac.compare_digest(token.encode(), raw):
            found = ("principal", token)
    if settings.token and hmac.compare_digest(settings.token.encode(), raw):
        found = ("operator", settings.token)
    return found


def check_bearer(headers: Headers, settings: ServerSettings) -> str | None:
    """The matching token, `""` when no auth is configured, or `None` when rejected."""
    found = bearer_role(headers, settings)
    return None if found is None else found[1]


# RFC 6750 §3 challenge: MCP clients (Claude Code) show `error_description`, so the user learns
# that a static bearer token is wanted, not an OAuth flow (which this server does not offer).
_CHALLENGE = (
    'Bearer realm="mcpgym", error="invalid_token", error_description="missing or invalid '
    "bearer token: send Authorization: Bearer <token> (claude mcp add ... --header "
    "'Authorization: Bearer <token>')\""
)


def unauthorized() -> JSONResponse:
    """401 with a JSON body and the `WWW-Authenticate` challenge."""
    return JSONResponse(
        {"error": {"code": "UNAUTHORIZED", "message": "missing or invalid bearer token"}},
        status_code=401,
        headers={"WWW-Authenticate": _CHALLENGE},
    )


def forbidden(message: str) -> JSONResponse:
    """403 with a JSON body: the caller is known but may not use this endpoint."""
    return JSONResponse({"error": {"code": "FORBIDDEN", "message": message}}, status_code=403)


def forbidden_origin() -> JSONResponse:
    return forbidden("Origin not allowed")


async def no_client_registration(request: object) -> JSONResponse:
    """`POST /register` on a server with a token: OAuth dynamic client registration refused.

    After a 401, Claude Code tries OAuth and registers a client at `/register`; it shows this
    body in its error, so the user reads that a static bearer token is wanted (RFC 7591 §3.2.2).
    """
    return JSONResponse(
        {
            "error": "invalid_client_metadata",
            "error_description": "this server takes a static bearer token, not OAuth: add it "
            "with --header 'Authorization: Bearer <token>'",
        },
        status_code=400,
    )
