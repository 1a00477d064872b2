"""OpenAI Responses answers, as the real API shapes them (body and the SSE event sequence)."""

from __future__ import annotations

from typing import Any

from mcpgym.harness.capture import SSE
from scripted_model.turn import Turn, chunks


def _message(turn: Turn, status: str, text: str | None) -> dict[str, Any]:
    content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "id": f"msg_{turn.id}",
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _call_item(turn: Turn, i: int, status: str, arguments: str) -> dict[str, Any]:
    call = turn.calls[i]
    item = {
        "id": f"fc_{turn.id}_{i}",
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call.id,
        "name": call.name,
    }
    if call.namespace:  # Codex answers "unsupported call" to a namespaced tool without it
        item["namespace"] = call.namespace
    return item


def _output(turn: Turn) -> list[dict[str, Any]]:
    items = [_message(turn, "completed", turn.text)] if turn.text else []
    items += [_call_item(turn, i, "completed", c.arguments_json) for i, c in enumerate(turn.calls)]
    return items


def body(turn: Turn, request: dict[str, Any], status: str = "completed") -> dict[str, Any]:
    done = status == "completed"
    usage = {
        "input_tokens": turn.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    return {
        "id": f"resp_{turn.id}",
        "object": "response",
        "created_at": turn.created,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "model": turn.model,
        "output": _output(turn) if done else [],
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "previous_response_id": request.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": request.get("store", True),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage if done else None,
        "user": None,
        "metadata": {},
    }


def events(turn: Turn, request: dict[str, Any]) -> list[SSE]:
    out: list[SSE] = []

    def emit(kind: str, **data: Any) -> None:
        out.append(SSE(kind, {"type": kind, "sequence_number": len(out), **data}))

    emit("response.created", response=body(turn, request, "in_progress"))
    emit("response.in_progress", response=body(turn, request, "in_progress"))
    index = 0
    if turn.text:
        item_id = f"msg_{turn.id}"
        emit("response.output_item.added", output_index=0, item=_message(turn, "in_progress", None))
        empty = {"type": "output_text", "text": "", "annotations": []}
        place = {"item_id": item_id, "output_index": 0, "content_index": 0}
        emit("response.content_part.added", **place, part=empty)
        for piece in chunks(turn.text):
            emit("response.output_text.delta", **place, delta=piece, logprobs=[])
        emit("response.output_text.done", **place, text=turn.text, logprobs=[])
        emit("response.content_part.done", **place, part=empty | {"text": turn.text})
        emit(
            "response.output_item.done", output_index=0, item=_message(turn, "completed", turn.text)
        )
        index = 1
    for i, call in enumerate(turn.calls):
        item_id = f"fc_{turn.id}_{i}"
        at = index + i
        emit(
            "response.output_item.added",
            output_index=at,
            item=_call_item(turn, i, "in_progress", ""),
        )
        for piece in chunks(call.arguments_json, size=8):
            emit(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=at,
                delta=piece,
            )
        args = call.arguments_json
        emit(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=at,
            arguments=args,
        )
        emit(
            "response.output_item.done",
            output_index=at,
            item=_call_item(turn, i, "completed", args),
        )
    emit("response.completed", response=body(turn, request))
    return out
