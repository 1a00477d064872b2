"""`normalize_url`: from the address a user types to the server's WebSocket endpoint; and what a
refused WebSocket upgrade means (`rejected_upgrade`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpgym.errors import RemoteError

__all__ = ["PROBES", "normalize_url", "probe_path", "probe_urls", "rejected_upgrade", "told"]

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


def normalize_url(base_url: str) -> str:
    """The WebSocket URL of the server at `base_url`.

    `http`/`https` become `ws`/`wss`, `/ws` is appended unless the path already ends with it, a
    path prefix (a server mounted behind a proxy) and the query string are kept, and a bare
    `host:port` means `http://host:port`.

    Example:
        >>> normalize_url("https://envs.example.com/guess/")
        'wss://envs.example.com/guess/ws'
        >>> normalize_url("localhost:8000")
        'ws://localhost:8000/ws'
    """
    url = base_url.strip()
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None:
        raise ValueError(
            f"unsupported URL scheme {parts.scheme!r} in {base_url!r}; use http(s) or ws(s)"
        )
    if not parts.netloc:
        raise ValueError(f"no host in URL {base_url!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/ws"):
        path += "/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


# what a client reads after a refused upgrade, in order, to tell a mode or protocol mismatch
# from a credential problem: /health names an mcpgym server's mode; /list_environments is ORS's
PROBES = ("/health", "/list_environments")


def probe_urls(url: str) -> list[str]:
    """The HTTP URLs (`PROBES`) of the server whose WebSocket endpoint `url` refused an upgrade."""
    base = "http" + url.removesuffix("/ws").removeprefix("ws")
    return [base + path for path in PROBES]


def probe_path(url: str) -> str:
    """The `PROBES` path a probe URL reads (`/health`, ...)."""
    return "/" + url.rsplit("/", 1)[-1]


def told(probe: dict[str, Any]) -> bool:
    """Whether the replies read so far say what the server is (no need to read further)."""
    health = probe.get("/health")
    return isinstance(health, dict) and "mode" in health


def rejected_upgrade(
    url: str, status: int, exc: BaseException, probe: dict[str, Any] | None = None
) -> RemoteError:
    """The server refused the WebSocket upgrade with an HTTP error (auth, `/ws` disabled, …).

    `probe` holds the JSON replies the caller could read from the server's `PROBES` (by path).
    A production server refuses `/ws` (episodes are simulation's), and a server of another
    protocol (ORS, or anything without OpenEnv's `/ws`) has none: those are a mode or protocol
    mismatch, not a credential problem, and are said so in one line with the fix.
    """
    probe = probe or {}
    health = probe.get("/health")
    base = "http" + url.removesuffix("/ws").removeprefix("ws")
    if isinstance(health, dict) and health.get("mode") == "production":
        return RemoteError(
            "MODE_MISMATCH",
            f"mode mismatch: {base} serves production mode (real MCP "
            "on /mcp), and this client plays simulation episodes over /ws, which production "
            "does not serve unless its operator enables it (--production-ws, with the "
            "operator's token); fix: serve it without --mode production, or use "
            "MCPToolClient for its /mcp tools",
            status=status,
            server_mode="production",
        )
    listing = probe.get("/list_environments")
    if isinstance(listing, list):
        names = ", ".join(str(n) for n in listing[:5]) or "none"
        return RemoteError(
            "PROTOCOL_MISMATCH",
            f"protocol mismatch: {base} is an ORS server (environments: {names}), which plays "
            "sessions over ORS's HTTP API, and this client plays OpenEnv episodes over /ws; "
            "fix: use ORS's own client (ors.client.ORS), or serve the class with "
            "`mcpgym serve --ors MODULE:CLASS` and point this client there",
            status=status,
            server_protocol="ors",
        )
    ours = isinstance(health, dict) and health.get("status") == "healthy"
    if health is not None and not ours and status in (403, 404):
        return RemoteError(
            "PROTOCOL_MISMATCH",
            f"protocol mismatch: {base} has no OpenEnv WebSocket endpoint (/ws answered HTTP "
            f"{status}, and /health is not an mcpgym or OpenEnv server's); fix: point this "
            "client at a `mcpgym serve` (simulation) or OpenEnv server, or use that server's "
            "own client",
            status=status,
        )
    code = "UNAUTHORIZED" if status in (401, 403) else f"HTTP_{status}"
    return RemoteError(code, f"{url} rejected the WebSocket connection: {exc}", status=status)
