"""What an mcpgym step, prompt and tool look like on the ORS wire (ors-sdk 0.1.0's shapes).

Pure functions: `servers/ors/routes.py` serves them. The shapes are ORS's:

- a tool call's answer is `{"ok": true, "output": {"blocks", "metadata", "reward", "finished"}}`
  or `{"ok": false, "error", "reason"}` (`reason` is openreward's discriminator; ORS ignores it);
  an ORS environment's own answer (`ors_output`) is sent as it is, and its tool that raised
  (`ors_raised`) is the call's SSE `error`, as `ors.Server` sends it;
- a block is `{"type": "text", "text", "detail"}` or `{"type": "image", "data", "mimeType",
  "detail"}`;
- a tool is `{"name", "description", "input_schema"}`.

A result that is MCP content (`mcpgym.content`) becomes blocks one for one (audio and resources,
which ORS has no block for, become text blocks holding the MCP block as JSON); any other result
is one text block, a string as it is and anything else as JSON, with the value itself in
`metadata["result"]`. A failed call whose step carries no reward and does not end the episode
and that named no tool of the session (`tool_not_found`) or broke its schema (`invalid_args`) is
ORS's `ok: false`; every other failure ran as a step and is a `ToolOutput` whose block is the
structured error (`metadata["error"]`), so its reward and `finished` reach the client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from mcpgym.content import ContentBlocks
from mcpgym.errors import ToolExecutionError
from mcpgym.types import CallToolObservation, ToolInfo

__all__ = ["CHUNK_CHARS", "prompt_blocks", "sse_event", "sse_result", "tool_output", "tool_spec"]

CHUNK_CHARS = 4096
"""Largest SSE `data` line sent: aiohttp, which both ORS clients use, bounds one line it reads."""

_REASONS = {"tool_not_found": "not_found", "invalid_args": "input_validation"}
_ORS_INVALID = "Tool input validation error"


def _text(text: str, detail: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "text", "text": text, "detail": detail}


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _block(block: dict[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        detail = block.get("detail")  # an ORS block's own (MCP blocks have none)
        return _text(block["text"], detail if isinstance(detail, dict) else None)
    if kind == "image" and isinstance(block.get("data"), str):
        return {
            "type": "image",
            "data": block["data"],
            "mimeType": str(block.get("mimeType", "")),
            "detail": block["detail"] if isinstance(block.get("detail"), dict) else None,
        }
    return _text(_json_text(block), {"mcp_type": kind})


def tool_output(obs: CallToolObservation) -> dict[str, Any]:
    """ORS's `RunToolOutput` (as JSON) for one mcpgym tool step (an ORS environment's own
    answer where the observation keeps it: `ors_output`, see `mcpgym.integrations.ors`)."""
    raised = getattr(obs, "ors_raised", None)
    if raised:  # an ORS tool that raised: ORS streams the call as an error, not an output
        raise ToolExecutionError(raised, tool=obs.tool_name)
    native = getattr(obs, "ors_output", None)
    if native is not None:
        if native.get("ok") is False and str(native.get("error")).startswith(_ORS_INVALID):
            return {**native, "reason": "input_validation"}
        return native
    reward = None if obs.reward is None else float(obs.reward)
    metadata: dict[str, Any] = {}
    if obs.error is not None:
        info = obs.error.model_dump(mode="json")
        kind = info.get("error_type", "")
        if kind in _REASONS and reward is None and not obs.done:
            extra = {k: v for k, v in info.items() if k not in ("error_type", "message")}
            message = info.get("message", kind) + (f" {_json_text(extra)}" if extra else "")
            return {"ok": False, "error": message, "reason": _REASONS[kind]}
        blocks = [_text(_json_text(info))]
        metadata["error"] = info
    elif isinstance(obs.result, ContentBlocks):
        blocks = [_block(b) for b in obs.result]
    else:
        result = obs.result
        blocks = [_text(result if isinstance(result, str) else _json_text(result))]
        metadata["result"] = result
    if obs.metadata:
        metadata["observation"] = obs.metadata
    output = {"blocks": blocks, "metadata": metadata, "reward": reward, "finished": obs.done}
    return {"ok": True, "output": output}


def prompt_blocks(prompt: Any) -> list[dict[str, Any]]:
    """The ORS prompt of an episode whose prompt is `prompt` (text, blocks, or None)."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [_text(prompt)]
    if isinstance(prompt, list) and all(isinstance(b, dict) for b in prompt):  # pyright: ignore[reportUnknownVariableType]
        return [_block(b) for b in prompt]  # pyright: ignore[reportUnknownArgumentType]
    return [_text(_json_text(prompt))]


def tool_spec(info: ToolInfo) -> dict[str, Any]:
    """ORS's `ToolSpec` for one tool (exactly its three fields: the ORS client splats them)."""
    return {"name": info.name, "description": info.description, "input_schema": info.input_schema}


def sse_event(event: str, data: str) -> bytes:
    """One server-sent event; `data` is one line (compact JSON, an id)."""
    return f"event: {event}\ndata: {data}\n\n".encode()


def sse_result(text: str) -> Iterator[bytes]:
    """`text` as ORS streams a result: `chunk` events, the last one `end`."""
    if not text:
        yield sse_event("end", "")
        return
    start = 0
    while start < len(text):
        end = min(start + CHUNK_CHARS, len(text))
        # Both clients strip the spaces a `data:` value begins with: never start a chunk on one.
        while start + 1 < end < len(text) and text[end].isspace():
            end -= 1
        yield sse_event("end" if end == len(text) else "chunk", text[start:end])
        start = end
