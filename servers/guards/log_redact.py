"""Keeps the one credential that travels in a URL out of the access log.

An operator-opened MCP episode is played at `/mcp?episode=ID`, and the id is what lets a client
in (servers/mcp/episodes.py). uvicorn's access log (`--log-level info`) writes every request's
path with its query, so the id — in `?episode=ID` and in the operator's `/mcp/episodes/ID` — is
replaced by `…` there before any handler sees the record.
"""

from __future__ import annotations

import logging
import re

__all__ = ["RedactEpisodeIds", "install"]

_EPISODE = re.compile(r"([?&]episode=|/mcp/episodes/)[^&/?\s\"]*")
_ACCESS_LOGGER = "uvicorn.access"


class RedactEpisodeIds(logging.Filter):
    """Rewrites `episode=<id>` and `/mcp/episodes/<id>` in a record's message and string
    arguments to `episode=…` and `/mcp/episodes/…`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and "episode" in record.msg:
            record.msg = _EPISODE.sub(r"\1…", record.msg)
        args = record.args
        if isinstance(args, tuple) and any(isinstance(a, str) and "episode" in a for a in args):
            record.args = tuple(_EPISODE.sub(r"\1…", a) if isinstance(a, str) else a for a in args)
        return True


def install() -> None:
    """Add the filter to uvicorn's access logger, once per process."""
    logger = logging.getLogger(_ACCESS_LOGGER)
    if not any(isinstance(f, RedactEpisodeIds) for f in logger.filters):
        logger.addFilter(RedactEpisodeIds())
