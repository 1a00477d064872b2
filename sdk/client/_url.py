"""`normalize_url`: from the address a user types to the server's WebSocket endpoint."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["normalize_url"]

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
