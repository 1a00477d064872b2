"""The `episode` parameter of an `/mcp` request: which operator-opened episode it plays.

(servers/mcp/episodes.py keeps the episodes; this is only the parsing of the query string, shared
by the `/mcp` routes and the MCP server.)
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs

__all__ = ["EPISODE_PARAM", "EpisodeQueryError", "episode_query"]

EPISODE_PARAM = "episode"
"""The `/mcp` query parameter naming an operator-opened episode."""
_ID = re.compile(r"[A-Za-z0-9_-]{32}")


class EpisodeQueryError(Exception):
    """The request's `episode` parameter is malformed (400) or names no live episode (404)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def episode_query(query_string: bytes | str) -> str | None:
    """The `episode` named by a query string, `None` when there is none.

    Raises `EpisodeQueryError` (400) for a repeated, empty or malformed value: a client that
    names an episode must name exactly one, or it would silently play a fresh one.
    """
    text = query_string.decode("latin-1") if isinstance(query_string, bytes) else query_string
    if EPISODE_PARAM not in text:  # the common case: no parsing at all
        return None
    values = parse_qs(text, keep_blank_values=True).get(EPISODE_PARAM)
    if values is None:
        return None
    if len(values) != 1:
        raise EpisodeQueryError("name one episode: `episode` is repeated", 400)
    if not _ID.fullmatch(values[0]):
        raise EpisodeQueryError(
            "`episode` is not an episode id: open one with POST /mcp/episodes", 400
        )
    return values[0]
