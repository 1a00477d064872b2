"""Forwarding to a real upstream: a second proxy plays the upstream (it checks the real key, and
records what reached it), so every byte goes over real sockets."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from capture_helpers import PATHS, auth, body
from mcpgym.harness.capture import (
    SSE,
    CaptureProxy,
    Dialect,
    ModelRequest,
    Reply,
    SSEParser,
    Upstream,
    parse_response,
)
from mcpgym.harness.trajectory import label_call
from scripted_model import ScriptedModel, call, say

DIALECTS: list[Dialect] = ["anthropic", "openai-chat", "openai-responses"]


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[CaptureProxy, str]]:
    """The 'real model API': a proxy with a scripted backend; its one key is the real key."""
    model = ScriptedModel([call("guess", {"n": 50}), say("done")])
    async with CaptureProxy(backend=model, models=["upstream-model"]) as real:
        yield real, real.new_episode_key()


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("stream", [False, True])
async def test_forwarding_swaps_the_key_and_passes_the_answer_through(
    dialect: Dialect, stream: bool, upstream: tuple[CaptureProxy, str]
) -> None:
    real, real_key = upstream
    target = Upstream(
        real.openai_base_url,
        api_key=real_key,
        model="upstream-model",
        extra_body={"return_token_ids": True},
    )
    async with CaptureProxy(upstream=target) as proxy, httpx.AsyncClient() as client:
        key = proxy.new_episode_key()
        payload = body(dialect, stream=stream)
        response = await client.post(
            proxy.base_url + PATHS[dialect] + "?beta=true", json=payload, headers=auth(dialect, key)
        )
        assert response.status_code == 200
        (outer,) = proxy.calls(key)
    (inner,) = real.calls(real_key)
    assert outer.request == payload, "the proxy records what the harness sent"
    assert inner.request == payload | {"model": "upstream-model", "return_token_ids": True}
    assert outer.upstream == real.openai_base_url and outer.status == 200
    assert outer.response == inner.response, "the answer reached the harness unchanged"
    assert outer.usage == inner.usage
    assert "x-api-key" not in inner.headers and "authorization" not in inner.headers
    if dialect == "anthropic":
        assert inner.headers["anthropic-version"] == "2023-06-01"
    if stream:
        events = SSEParser().feed(response.content)
        assert events and response.headers["content-type"].startswith("text/event-stream")
    (tool_call,) = parse_response(dialect, outer.response).tool_calls
    assert tool_call.arguments == {"n": 50}


async def test_upstream_errors_pass_through(upstream: tuple[CaptureProxy, str]) -> None:
    real, _ = upstream
    target = Upstream(real.openai_base_url, api_key="wrong-real-key")
    async with CaptureProxy(upstream=target) as proxy, httpx.AsyncClient() as client:
        key = proxy.new_episode_key()
        response = await client.post(
            proxy.base_url + PATHS["anthropic"],
            json=body("anthropic", stream=True),
            headers=auth("anthropic", key),
        )
        assert response.status_code == 401
        (recorded,) = proxy.calls(key)
        assert recorded.status == 401 and recorded.error == response.json()


async def test_unreachable_upstream_is_a_502() -> None:
    async with CaptureProxy() as probe:
        dead_url = probe.openai_base_url  # a port that is closed once this block ends
    async with CaptureProxy(upstream=Upstream(dead_url, api_key="k")) as proxy:
        key = proxy.new_episode_key()
        async with httpx.AsyncClient() as client:
            response = await client.post(
                proxy.base_url + PATHS["openai-chat"],
                json=body("openai-chat", stream=False),
                headers=auth("openai-chat", key),
            )
        assert response.status_code == 502
        assert response.json()["error"]["code"] == "upstream_error"
        assert proxy.calls(key)[0].status == 502


async def test_model_listing_is_forwarded(upstream: tuple[CaptureProxy, str]) -> None:
    real, real_key = upstream
    async with CaptureProxy(upstream=Upstream(real.openai_base_url, api_key=real_key)) as proxy:
        async with httpx.AsyncClient() as client:
            listing = (await client.get(proxy.base_url + "/v1/models")).json()
    assert [m["id"] for m in listing["data"]] == ["upstream-model"]


# --- token ids (vLLM's `return_token_ids`) ------------------------------------------------------


def _chunk(delta: dict[str, Any], **extra: Any) -> SSE:
    choice = {"index": 0, "delta": delta, "finish_reason": extra.pop("finish", None)}
    if "token_ids" in extra:
        choice["token_ids"] = extra.pop("token_ids")
    return SSE(
        None,
        {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice], **extra},
    )


async def vllm_like(request: ModelRequest) -> Reply:
    assert request.body.get("return_token_ids") is True
    if not request.stream:
        return {
            "id": "c1",
            "object": "chat.completion",
            "model": "m",
            "prompt_token_ids": [1, 2, 3],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "hi there"},
                    "finish_reason": "stop",
                    "token_ids": [7, 8],
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        }
    return [
        _chunk({"role": "assistant", "content": ""}, prompt_token_ids=[1, 2, 3]),
        _chunk({"content": "hi"}, token_ids=[7]),
        _chunk({"content": " there"}, token_ids=[8]),
        _chunk({}, finish="stop"),
        SSE(
            None,
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "choices": [],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            },
        ),
        SSE(None, "[DONE]"),
    ]


@pytest.mark.parametrize("stream", [False, True])
async def test_token_ids_are_recorded_and_masked(stream: bool) -> None:
    async with CaptureProxy(backend=vllm_like) as real:
        real_key = real.new_episode_key()
        target = Upstream(
            real.openai_base_url, api_key=real_key, extra_body={"return_token_ids": True}
        )
        async with CaptureProxy(upstream=target) as proxy, httpx.AsyncClient() as client:
            key = proxy.new_episode_key()
            payload = body("openai-chat", stream=stream)
            response = await client.post(
                proxy.base_url + PATHS["openai-chat"],
                json=payload,
                headers=auth("openai-chat", key),
            )
            assert response.status_code == 200
            (recorded,) = proxy.calls(key)
    assert (recorded.prompt_token_ids, recorded.completion_token_ids) == ([1, 2, 3], [7, 8])
    assert parse_response("openai-chat", recorded.response).text == "hi there"
    labelled = label_call(recorded)
    assert labelled.token_ids == [1, 2, 3, 7, 8]
    assert labelled.mask == [0, 0, 0, 1, 1]


async def test_count_tokens_goes_upstream_and_bad_json_is_a_400(
    upstream: tuple[CaptureProxy, str],
) -> None:
    real, real_key = upstream
    async with CaptureProxy(upstream=Upstream(real.openai_base_url, api_key=real_key)) as proxy:
        headers = auth("anthropic", proxy.new_episode_key())
        async with httpx.AsyncClient(base_url=proxy.base_url) as client:
            counted = await client.post(
                "/v1/messages/count_tokens", headers=headers, json=body("anthropic", stream=False)
            )
            broken = await client.post("/v1/messages/count_tokens", headers=headers, content=b"{")
    assert counted.status_code == 200 and counted.json()["input_tokens"] > 0
    assert broken.status_code == 400 and broken.json()["type"] == "error"
