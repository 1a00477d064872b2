"""The request frame record, OpenEnv's refusal of our frame extensions, and tool-result values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpgym.errors import ClientError

__all__ = ["PlainFrames", "Request", "refuses_extensions", "tool_value"]

Frame = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Request:
    """One encoded request frame and what the transport needs to know about it."""

    id: str
    type: str
    text: str
    timeout: float | None
    """Seconds to wait for the reply; `None` waits forever."""
    frame: Frame | None = None
    """The frame `text` encodes (kept so it can be re-encoded without our extensions)."""


EXTENSIONS = ("id", "timeout_s")
"""Frame fields of ours that OpenEnv's server rejects as unknown."""


class PlainFrames(ClientError):
    """The server refused our frame extensions: send `request` (the same frame without them).

    Transports catch it and resend; it only escapes (as a `ClientError`) if the server refuses
    the plain frame too.
    """

    def __init__(self, request: Request) -> None:
        super().__init__(f"the server refused the {request.type!r} frame's extra fields")
        self.request = request


def refuses_extensions(data: Any) -> bool:
    """Whether an error frame's pydantic `errors` name one of our extensions as forbidden."""
    errors: Any = data.get("errors") if isinstance(data, dict) else None  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(errors, list):
        return False
    for err in errors:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(err, dict):
            continue
        loc: Any = err.get("loc")  # pyright: ignore[reportUnknownMemberType]
        first = loc[0] if isinstance(loc, list | tuple) and loc else None
        if err.get("type") == "extra_forbidden" and first in EXTENSIONS:  # pyright: ignore[reportUnknownMemberType]
            return True
    return False


def tool_value(result: Any) -> Any:
    """A tool's value from an OpenEnv call result (FastMCP's `CallToolResult` as JSON).

    `data` is FastMCP's parsed value; without it, the structured content; else the content
    blocks. Anything that is not such a result is returned as it is.
    """
    if not isinstance(result, dict) or "content" not in result:
        return result
    body: dict[str, Any] = result  # pyright: ignore[reportUnknownVariableType]
    if body.get("data") is not None:
        return body["data"]
    structured = body.get("structured_content", body.get("structuredContent"))
    if structured is not None:
        return structured
    return body.get("content")
