"""OpenAI Chat Completions answers, as the real API shapes them (body and SSE chunks)."""

from __future__ import annotations

from typing import Any

from mcpgym.harness.capture import SSE
from scripted_model.turn import Turn, chunks


def _usage(turn: Turn) -> dict[str, Any]:
    return {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }


def _finish(turn: Turn) -> str:
    return "tool_calls" if turn.calls else "stop"


def body(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None, "refusal": None}
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for c in turn.calls
        ]
    return {
        "id": turn.id,
        "object": "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(turn)}
        ],
        "usage": _usage(turn),
        "system_fingerprint": "fp_scripted",
    }


def events(turn: Turn, include_usage: bool) -> list[SSE]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> SSE:
        data: dict[str, Any] = {
            "id": turn.id,
            "object": "chat.completion.chunk",
            "created": turn.created,
            "model": turn.model,
            "system_fingerprint": "fp_scripted",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            data["usage"] = None
        return SSE(None, data)

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if turn.text:
        out += [chunk({"content": piece}) for piece in chunks(turn.text)]
    for i, call in enumerate(turn.calls):
        head = {"index": i, "id": call.id, "type": "function"}
        out.append(
            chunk({"tool_calls": [head | {"function": {"name": call.name, "arguments": ""}}]})
        )
        for piece in chunks(call.arguments_json, size=8):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    out.append(chunk({}, _finish(turn)))
    if include_usage:
        last = chunk({}).data | {"choices": [], "usage": _usage(turn)}
        out.append(SSE(None, last))
    out.append(SSE(None, "[DONE]"))
    return out
