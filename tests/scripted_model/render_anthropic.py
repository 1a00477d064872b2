"""Anthropic Messages answers, as the real API shapes them (non-streamed body and SSE events)."""

from __future__ import annotations

import json
from typing import Any

from mcpgym.harness.capture import SSE
from scripted_model.turn import Turn, chunks


def _usage(turn: Turn, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": turn.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def _blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for call in turn.calls:
        blocks.append(
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        )
    return blocks


def _stop_reason(turn: Turn) -> str:
    return "tool_use" if turn.calls else "end_turn"


def body(turn: Turn) -> dict[str, Any]:
    return {
        "id": turn.id,
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": _blocks(turn),
        "stop_reason": _stop_reason(turn),
        "stop_sequence": None,
        "usage": _usage(turn, turn.output_tokens),
    }


def events(turn: Turn) -> list[SSE]:
    start = body(turn) | {"content": [], "stop_reason": None, "usage": _usage(turn, 1)}
    out = [
        SSE("message_start", {"type": "message_start", "message": start}),
        SSE("ping", {"type": "ping"}),
    ]
    index = 0
    if turn.text:
        block = {"type": "text", "text": ""}
        out.append(_block_start(index, block))
        for piece in chunks(turn.text):
            delta = {"type": "text_delta", "text": piece}
            out.append(_delta(index, delta))
        out.append(_block_stop(index))
        index += 1
    for call in turn.calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        out.append(_block_start(index, block))
        for piece in chunks(json.dumps(call.arguments), size=8):
            out.append(_delta(index, {"type": "input_json_delta", "partial_json": piece}))
        out.append(_block_stop(index))
        index += 1
    delta = {"stop_reason": _stop_reason(turn), "stop_sequence": None}
    usage = {"output_tokens": turn.output_tokens}
    out.append(SSE("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    out.append(SSE("message_stop", {"type": "message_stop"}))
    return out


def _block_start(index: int, block: dict[str, Any]) -> SSE:
    data = {"type": "content_block_start", "index": index, "content_block": block}
    return SSE("content_block_start", data)


def _delta(index: int, delta: dict[str, Any]) -> SSE:
    return SSE(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    )


def _block_stop(index: int) -> SSE:
    return SSE("content_block_stop", {"type": "content_block_stop", "index": index})
