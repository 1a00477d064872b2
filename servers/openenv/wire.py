"""The wire shapes of OpenEnv 0.10.0's HTTP MCP dialect (see servers/openenv/dialect.py).

Pure functions, no I/O: which requests are OpenEnv's (`claims`), the JSON-RPC envelopes, how a
spec `CallToolResult` is rewritten for OpenEnv's client (`openenv_call_result`), which WebSocket
frames ask for an episode, and the `Host` check the spec transport applies.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from starlette.datastructures import Headers

from mcpgym.errors import InvalidJSON
from mcpgym.servers import wire_json

__all__ = [
    "INTERNAL",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "TOOLS",
    "asks_for_episode",
    "claims",
    "error",
    "host_allowed",
    "openenv_call_result",
    "result",
]

TOOLS = ("tools/list", "tools/call")
METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL = -32601, -32602, -32603
_EPISODE_FRAMES = (b'"reset"', b'"step"', b'"state"')


def claims(headers: Headers, message: Any) -> bool:
    """Whether a POSTed JSON-RPC `message` is OpenEnv's dialect rather than spec MCP."""
    if not isinstance(message, dict) or "mcp-session-id" in headers:
        return False
    method: Any = message.get("method")  # pyright: ignore[reportUnknownMemberType]
    if not isinstance(method, str):
        return False
    if method.startswith("openenv/"):
        return True
    if method not in TOOLS:
        return False
    params: Any = message.get("params")  # pyright: ignore[reportUnknownMemberType]
    if isinstance(params, dict) and "session_id" in params:
        return True
    # A spec client must accept SSE and, from 2026-07-28, names its protocol version; a request
    # doing neither would be refused by the spec transport, so answering it changes no spec path.
    spec_like = "text/event-stream" in headers.get("accept", "") or "mcp-protocol-version" in (
        headers
    )
    return not spec_like and not (isinstance(params, dict) and "_meta" in params)


def asks_for_episode(text: str | bytes) -> bool:
    """Whether a WebSocket frame is an episode frame (`reset`, `step`, `state`); a frame that
    is not strict JSON is not (the dispatcher then answers `INVALID_JSON`)."""
    try:
        message: Any = wire_json.loads(text, "frame")
    except InvalidJSON:
        return False
    kind: Any = message.get("type") if isinstance(message, dict) else None  # pyright: ignore[reportUnknownMemberType]
    return isinstance(kind, str) and f'"{kind}"'.encode() in _EPISODE_FRAMES


def result(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


def openenv_call_result(response: dict[str, Any], name: Any, wrapped: bool) -> dict[str, Any]:
    """A spec `CallToolResult` as OpenEnv's clients read it.

    OpenEnv's client returns `result["data"]` (FastMCP's parsed value) and raises on a JSON-RPC
    error; its own server reports a failing tool as `-32603` with the failure's message. So an
    `isError` result becomes that error (the structured failure in `data`), and a success keeps
    every spec field and adds `data`: the structured value (unwrapped when the tool's schema
    wrapped a non-object), else the text of a single text block, else the content blocks.
    """
    result = response.get("result")
    if not isinstance(result, dict):
        return response
    body: dict[str, Any] = dict(result)  # pyright: ignore[reportUnknownArgumentType]
    content: Any = body.get("content") or []
    if body.get("isError"):
        detail: Any = body.get("structuredContent")
        if not isinstance(detail, dict):
            detail = _json_text(content)
        message = detail.get("message") if isinstance(detail, dict) else None
        text = str(message or _joined_text(content) or f"tool {name!r} failed")
        return error(response.get("id"), INTERNAL, text, detail)
    structured: Any = body.get("structuredContent")
    if isinstance(structured, dict):
        body["data"] = structured.get("result") if wrapped else structured  # pyright: ignore[reportUnknownMemberType]
    elif isinstance(content, list) and len(content) == 1 and _is_text(content[0]):  # pyright: ignore[reportUnknownArgumentType]
        body["data"] = content[0]["text"]
    else:
        body["data"] = content
    return {**response, "result": body}


def _is_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text"  # pyright: ignore[reportUnknownMemberType]


def _joined_text(content: Any) -> str:
    blocks: list[Any] = content if isinstance(content, list) else []  # pyright: ignore[reportUnknownVariableType]
    return " ".join(str(b["text"]) for b in blocks if _is_text(b))


def _json_text(content: Any) -> Any:
    try:
        return json.loads(_joined_text(content))
    except (ValueError, RecursionError):
        return None


def host_allowed(host: str | None, allowed: Sequence[str]) -> bool:
    """The DNS-rebinding guard of spec `/mcp`: exact entries, or `name:*` for any port."""
    if not host:
        return False
    if host in allowed:
        return True
    return any(a.endswith(":*") and host.startswith(a[:-1]) for a in allowed)
