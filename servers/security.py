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
"""

from __future__ import annotations

import hmac
from typing import Literal
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from mcpgym.servers.settings import ServerSettings

__all__ = [
    "Role",
    "bearer_role",
    "check_bearer",
    "forbidden",
    "forbidden_origin",
    "no_client_registration",
    "origin_allowed",
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
