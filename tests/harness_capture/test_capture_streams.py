"""The SSE parser and the per-dialect reassemblers, on edge cases real streams produce."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgym.harness.capture import SSE, SSEParser, reassembler_for

RAW = (
    b'event: message_start\ndata: {"type":"message_start","message":{"content":[]}}\n\n'
    b": keep-alive comment\n\n"
    b'event: content_block_delta\r\ndata: {"text":"h\xc3\xa9llo \xf0\x9f\x98\x80"}\r\n\r\n'
    b"data: first line\ndata: second line\n\n"
    b"data: [DONE]\n\n"
)


def test_parser_is_independent_of_chunking() -> None:
    whole = SSEParser().feed(RAW)
    assert [e.event for e in whole] == ["message_start", "content_block_delta", None, None]
    assert whole[1].data == {"text": "héllo 😀"}
    assert whole[2].data == "first line\nsecond line"
    assert whole[3].data == "[DONE]"
    for size in (1, 2, 3, 7):
        parser = SSEParser()
        events = [e for i in range(0, len(RAW), size) for e in parser.feed(RAW[i : i + size])]
        assert events == whole, f"chunks of {size} bytes"


def test_encode_then_parse_round_trips() -> None:
    events = [SSE("a", {"x": [1, "é"]}), SSE(None, "[DONE]")]
    assert SSEParser().feed(b"".join(e.encode() for e in events)) == events


def fold(dialect: Any, events: list[SSE]) -> tuple[dict[str, Any] | None, Any]:
    folder = reassembler_for(dialect)
    for event in events:
        folder.feed(event)
    return folder.result(), folder.error


def test_anthropic_thinking_signature_and_usage_merge() -> None:
    def delta(index: int, **d: Any) -> SSE:
        return SSE(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}
        )

    body, error = fold(
        "anthropic",
        [
            SSE(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "m",
                        "content": [],
                        "usage": {"input_tokens": 9, "output_tokens": 1},
                    },
                },
            ),
            SSE(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "thinking", "thinking": ""},
                },
            ),
            delta(0, type="thinking_delta", thinking="let me "),
            delta(0, type="thinking_delta", thinking="think"),
            delta(0, type="signature_delta", signature="sig"),
            SSE("content_block_stop", {"type": "content_block_stop", "index": 0}),
            SSE(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {"type": "tool_use", "id": "t", "name": "x", "input": {}},
                },
            ),
            SSE("content_block_stop", {"type": "content_block_stop", "index": 1}),
            SSE(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "tool_use"},
                    "usage": {"output_tokens": 12},
                },
            ),
        ],
    )
    assert error is None and body is not None
    assert body["content"] == [
        {"type": "thinking", "thinking": "let me think", "signature": "sig"},
        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
    ]
    assert body["usage"] == {"input_tokens": 9, "output_tokens": 12}
    assert body["stop_reason"] == "tool_use"


def test_anthropic_error_event_is_kept() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    body, kept = fold("anthropic", [SSE("error", error)])
    assert body is None and kept == error


def test_chat_parallel_tool_calls_and_reasoning() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> SSE:
        return SSE(
            None,
            {
                "id": "c",
                "model": "m",
                "created": 1,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
        )

    body, _ = fold(
        "openai-chat",
        [
            chunk({"role": "assistant", "reasoning_content": "hmm"}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "f", "arguments": ""}},
                        {"index": 1, "id": "b", "function": {"name": "g", "arguments": "{}"}},
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x":'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": " 1}"}}]}),
            chunk({}, "tool_calls"),
            SSE(None, "[DONE]"),
        ],
    )
    assert body is not None and body["object"] == "chat.completion"
    message = body["choices"][0]["message"]
    assert message["reasoning_content"] == "hmm"
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]
    ] == [("a", "f", '{"x": 1}'), ("b", "g", "{}")]
    assert body["choices"][0]["finish_reason"] == "tool_calls"


def test_chat_error_chunk_is_kept() -> None:
    _, error = fold("openai-chat", [SSE(None, {"error": {"message": "bad"}})])
    assert error == {"error": {"message": "bad"}}


def test_responses_rebuilds_an_empty_completed_output_from_items() -> None:
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "x"}],
    }
    body, _ = fold(
        "openai-responses",
        [
            SSE(
                "response.created",
                {"type": "response.created", "response": {"id": "r", "output": []}},
            ),
            SSE(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            SSE(
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {"id": "r", "status": "completed", "output": []},
                },
            ),
        ],
    )
    assert body is not None and body["output"] == [item]


@pytest.mark.parametrize("kind", ["response.failed", "error"])
def test_responses_failures_are_kept(kind: str) -> None:
    data = {"type": kind, "response": {"id": "r", "error": {"code": "x"}}, "code": "x"}
    _, error = fold("openai-responses", [SSE(kind, data)])
    assert error is not None
