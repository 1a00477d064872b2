"""Who may talk to the server: browser `Origin` checks and bearer tokens (constant-time).

Shared by `/mcp`, `/ws` and the harness route; no MCP machinery is imported here.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from mcpgym.servers.settings import ServerSettings

__all__ = [
    "check_bearer",
    "forbidden_origin",
    "no_client_registration",
    "origin_allowed",
    "unauthorized",
]


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


def check_bearer(headers: Headers, settings: ServerSettings) -> str | None:
    """The matching token, `""` when no auth is configured, or `None` when rejected.

    Compares in constant time against every configured token.
    """
    if not settings.token and not settings.principals:
        return ""
    scheme, _, given = headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given:
        return None
    matched: str | None = None
    candidates: list[str] = [*settings.principals]
    if settings.token:
        candidates.append(settings.token)
    for token in candidates:
        if hmac.compare_digest(token.encode(), given.encode()):
            matched = token
    return matched


# RFC 6750 §3 challenge: MCP clients (Claude Code) show `error_description`, so the user learns
# that a static bearer token is wanted, not an OAuth flow (which this server does not offer).
_CHALLENGE = (
    'Bearer realm="mcpgym", error="invalid_token", error_description="missing or invalid '
    "bearer token: send Authorization: Bearer <token> (claude mcp add ... --header "
    "'Authorization: Bearer <token>')\""
)


def unauthorized() -> JSONResponse:
    return JSONResponse(
        {"error": {"code": "UNAUTHORIZED", "message": "missing or invalid bearer token"}},
        status_code=401,
        headers={"WWW-Authenticate": _CHALLENGE},
    )


def forbidden_origin() -> JSONResponse:
    return JSONResponse(
        {"error": {"code": "FORBIDDEN", "message": "Origin not allowed"}}, status_code=403
    )


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
