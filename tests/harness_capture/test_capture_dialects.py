"""Each dialect through the proxy, streamed and not: the scripted model's answers have the real
APIs' shapes and event sequences, and the proxy records the same body either way."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from capture_helpers import PATHS, auth, body
from mcpgym.harness.capture import (
    SSE,
    CaptureProxy,
    Dialect,
    SSEParser,
    parse_request,
    parse_response,
)
from scripted_model import ScriptedModel

DIALECTS: list[Dialect] = ["anthropic", "openai-chat", "openai-responses"]


async def post(
    client: httpx.AsyncClient, proxy: CaptureProxy, dialect: Dialect, payload: dict[str, Any]
) -> httpx.Response:
    key = proxy.new_episode_key()
    return await client.post(PATHS[dialect], json=payload, headers=auth(dialect, key))


def scrub(value: Any) -> Any:
    """`value` with the scripted model's numbered ids made equal."""
    return json.loads(re.sub(r"scripted([_-])\d{4}", r"scripted\1N", json.dumps(value)))


def events_of(response: httpx.Response) -> list[SSE]:
    assert response.headers["content-type"].startswith("text/event-stream")
    parser = SSEParser()
    events = parser.feed(response.content)
    assert parser.feed(b"\n\n") == [], "the stream ends on an event boundary"
    return events


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_non_streamed_tool_call(
    dialect: Dialect, asgi: httpx.AsyncClient, local_proxy: CaptureProxy
) -> None:
    response = await post(asgi, local_proxy, dialect, body(dialect, stream=False))
    assert response.status_code == 200
    (call,) = parse_response(dialect, response.json()).tool_calls
    assert (call.name, call.arguments) == ("mcp__env__guess", {"n": 50})
    (recorded,) = local_proxy.calls(local_proxy.store.keys()[0])
    assert recorded.response == response.json() and recorded.status == 200
    assert recorded.usage is not None and recorded.usage.input_tokens > 0


async def test_anthropic_stream_has_the_real_event_sequence(
    asgi: httpx.AsyncClient, local_proxy: CaptureProxy
) -> None:
    response = await post(asgi, local_proxy, "anthropic", body("anthropic", stream=True))
    events = events_of(response)
    names = [e.event for e in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert all(e.event == e.data["type"] for e in events), "event name == data.type"
    start = events[0].data["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    block = next(e.data for e in events if e.event == "content_block_start")
    assert block["content_block"] == {
        "type": "tool_use",
        "id": block["content_block"]["id"],
        "name": "mcp__env__guess",
        "input": {},
    }
    partial = "".join(
        e.data["delta"]["partial_json"] for e in events if e.event == "content_block_delta"
    )
    assert json.loads(partial) == {"n": 50}
    assert events[-2].data["delta"]["stop_reason"] == "tool_use"


async def test_chat_stream_has_tool_call_deltas_usage_and_done(
    asgi: httpx.AsyncClient, local_proxy: CaptureProxy
) -> None:
    payload = body("openai-chat", stream=True, stream_options={"include_usage": True})
    events = events_of(await post(asgi, local_proxy, "openai-chat", payload))
    assert events[-1].data == "[DONE]"
    chunks = [e.data for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    head = chunks[1]["choices"][0]["delta"]["tool_calls"][0]
    assert head["function"] == {"name": "mcp__env__guess", "arguments": ""} and head["id"]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


async def test_chat_stream_without_include_usage_has_no_usage_chunk(
    asgi: httpx.AsyncClient, local_proxy: CaptureProxy
) -> None:
    events = events_of(
        await post(asgi, local_proxy, "openai-chat", body("openai-chat", stream=True))
    )
    assert all("usage" not in e.data for e in events[:-1])


async def test_responses_stream_has_the_real_event_sequence(
    asgi: httpx.AsyncClient, local_proxy: CaptureProxy
) -> None:
    payload = body("openai-responses", stream=True)
    events = events_of(await post(asgi, local_proxy, "openai-responses", payload))
    names = [e.event for e in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        *["response.function_call_arguments.delta"] * (len(names) - 6),
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.data["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0].data["response"]["status"] == "in_progress"
    done = events[-1].data["response"]
    assert done["status"] == "completed" and done["usage"]["total_tokens"] > 0
    assert done["output"][0]["name"] == "mcp__env__guess"


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_stream_and_non_stream_record_the_same_body(
    dialect: Dialect, asgi: httpx.AsyncClient, local_proxy: CaptureProxy
) -> None:
    usage: dict[str, Any] = {}
    if dialect == "openai-chat":
        usage["stream_options"] = {"include_usage": True}
    await post(asgi, local_proxy, dialect, body(dialect, stream=False))
    await post(asgi, local_proxy, dialect, body(dialect, stream=True, **usage))
    keys = local_proxy.store.keys()
    plain, streamed = (local_proxy.calls(k)[0] for k in keys)
    assert streamed.stream and not plain.stream
    assert parse_response(dialect, scrub(streamed.response)) == parse_response(
        dialect, scrub(plain.response)
    )
    if dialect != "openai-chat":  # chat chunks do not carry every field of the full body
        assert scrub(streamed.response) == scrub(plain.response)
    assert streamed.usage == plain.usage
    assert streamed.first_byte_s is not None and streamed.duration_s is not None


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_text_answer_after_the_tool_result(
    dialect: Dialect,
    stream: bool,
    asgi: httpx.AsyncClient,
    local_proxy: CaptureProxy,
    model: ScriptedModel,
) -> None:
    """Turn 2: the history holds the tool call and its result, so step 1 (text) is played."""
    key = local_proxy.new_episode_key()
    first = await asgi.post(
        PATHS[dialect], json=body(dialect, stream=stream), headers=auth(dialect, key)
    )
    assert first.status_code == 200
    tool_call = local_proxy.calls(key)[0].response
    second = await asgi.post(
        PATHS[dialect], json=follow_up(dialect, stream, tool_call), headers=auth(dialect, key)
    )
    assert second.status_code == 200
    answer = parse_response(dialect, local_proxy.calls(key)[1].response)
    assert answer.text == "The number is 50." and answer.tool_calls == []
    first_request, second_request = model.requests(key)
    history = parse_request(dialect, second_request.body)
    assert history.assistant_turns == 1, "the second request holds the first model turn"
    assert any(p.kind == "tool_result" for m in history.messages for p in m.parts)
    assert parse_request(dialect, first_request.body).assistant_turns == 0


def follow_up(dialect: Dialect, stream: bool, answer: dict[str, Any] | None) -> dict[str, Any]:
    """The first request plus the model's tool call and the tool's result."""
    assert answer is not None
    payload = body(dialect, stream=stream)
    result = '{"verdict": "correct"}'
    if dialect == "anthropic":
        call_id = answer["content"][0]["id"]
        payload["messages"] += [
            {"role": "assistant", "content": answer["content"]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            },
        ]
    elif dialect == "openai-chat":
        message = answer["choices"][0]["message"]
        payload["messages"] += [
            message,
            {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": result},
        ]
    else:
        item = answer["output"][0]
        payload["input"] += [
            item,
            {"type": "function_call_output", "call_id": item["call_id"], "output": result},
        ]
    return payload
