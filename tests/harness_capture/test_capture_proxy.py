"""The proxy itself: keys route and separate episodes, bad input is a structured 4xx (never a 500),
backend failures are reported, and the server runs on a loop or in a thread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from capture_helpers import PATHS, auth, body
from mcpgym.harness.capture import (
    SSE,
    BackendError,
    CaptureProxy,
    Dialect,
    LLMCall,
    ModelRequest,
    Reply,
    UnknownKeyError,
)
from scripted_model import ScriptedModel, say
from scripted_model.server import scripted_proxy_thread

DIALECTS: list[Dialect] = ["anthropic", "openai-chat", "openai-responses"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_unknown_key_is_a_401_in_the_dialects_shape(
    dialect: Dialect, asgi: httpx.AsyncClient
) -> None:
    for headers in (auth(dialect, "not-issued"), {}):
        response = await asgi.post(
            PATHS[dialect], json=body(dialect, stream=False), headers=headers
        )
        assert response.status_code == 401
        error = response.json()["error"]
        assert "unknown API key" in error["message"]
        if dialect == "anthropic":
            assert response.json()["type"] == "error"
            assert error["type"] == "authentication_error"
        else:
            assert error["code"] == "invalid_api_key"


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "raw", [b"{not json", b"[1, 2]", b"", "\udcff".encode(errors="surrogatepass")]
)
async def test_malformed_body_is_a_400(
    dialect: Dialect, raw: bytes, asgi: httpx.AsyncClient, local_proxy: CaptureProxy
) -> None:
    key = local_proxy.new_episode_key()
    response = await asgi.post(PATHS[dialect], content=raw, headers=auth(dialect, key))
    assert response.status_code == 400
    assert response.json()["error"]["message"]
    assert local_proxy.calls(key) == [], "a request that never reached a model is not a call"


async def test_unknown_path_and_method_are_structured(asgi: httpx.AsyncClient) -> None:
    missing = await asgi.post("/v1/completions", json={})
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"
    wrong = await asgi.get("/v1/messages")
    assert wrong.status_code == 405
    assert wrong.json()["error"]["message"]


async def test_model_listing_in_both_shapes(asgi: httpx.AsyncClient) -> None:
    openai = (await asgi.get("/v1/models")).json()
    assert openai["object"] == "list"
    assert "scripted" in [m["id"] for m in openai["data"]]
    anthropic = (await asgi.get("/v1/models", headers={"anthropic-version": "2023-06-01"})).json()
    assert anthropic["has_more"] is False and anthropic["data"][0]["type"] == "model"
    one = await asgi.get("/v1/models/claude-sonnet-4-5", headers={"anthropic-version": "x"})
    assert one.json()["id"] == "claude-sonnet-4-5"
    assert (await asgi.get("/v1/models/nope")).status_code == 404
    assert (await asgi.get("/health")).json() == {"status": "healthy"}


async def test_count_tokens(asgi: httpx.AsyncClient, local_proxy: CaptureProxy) -> None:
    key = local_proxy.new_episode_key()
    payload = body("anthropic", stream=False)
    counted = await asgi.post(
        "/v1/messages/count_tokens", json=payload, headers=auth("anthropic", key)
    )
    assert counted.status_code == 200 and counted.json()["input_tokens"] > 0
    refused = await asgi.post("/v1/messages/count_tokens", json=payload)
    assert refused.status_code == 401


async def test_concurrent_episodes_are_recorded_apart(proxy: CaptureProxy) -> None:
    """24 episodes, 8 per dialect, each making its own calls at the same time."""
    keys: dict[str, Dialect] = {
        proxy.new_episode_key(label=f"ep{i}"): DIALECTS[i % 3] for i in range(24)
    }

    async def episode(client: httpx.AsyncClient, key: str, dialect: Dialect) -> None:
        for stream in (True, False):
            payload = body(dialect, stream=stream, prompt=f"episode {key}")
            response = await client.post(PATHS[dialect], json=payload, headers=auth(dialect, key))
            assert response.status_code == 200

    async with httpx.AsyncClient(base_url=proxy.base_url, timeout=30) as client:
        async with asyncio.TaskGroup() as tasks:
            for key, dialect in keys.items():
                tasks.create_task(episode(client, key, dialect))
    for key, dialect in keys.items():
        calls = proxy.calls(key)
        assert [(c.index, c.stream, c.dialect) for c in calls] == [
            (0, True, dialect),
            (1, False, dialect),
        ]
        assert all(f"episode {key}" in str(c.request) and c.key == key for c in calls)
        assert all(c.done and c.status == 200 for c in calls)


async def test_listener_sees_request_then_response(proxy: CaptureProxy) -> None:
    seen: list[tuple[str, int, bool]] = []
    key = proxy.new_episode_key(listener=lambda phase, c: seen.append((phase, c.index, c.done)))
    async with httpx.AsyncClient(base_url=proxy.base_url) as client:
        for dialect in ("anthropic", "openai-chat"):
            payload = body(dialect, stream=True)
            await client.post(PATHS[dialect], json=payload, headers=auth(dialect, key))
    assert seen == [
        ("request", 0, False),
        ("response", 0, True),
        ("request", 1, False),
        ("response", 1, True),
    ]


async def test_dropped_key_is_refused_afterwards(proxy: CaptureProxy) -> None:
    key = proxy.new_episode_key()
    async with httpx.AsyncClient(base_url=proxy.base_url) as client:
        payload = body("openai-chat", stream=False)
        assert (
            await client.post(PATHS["openai-chat"], json=payload, headers=auth("openai-chat", key))
        ).status_code == 200
        assert len(proxy.drop_episode(key)) == 1
        again = await client.post(
            PATHS["openai-chat"], json=payload, headers=auth("openai-chat", key)
        )
        assert again.status_code == 401
    with pytest.raises(UnknownKeyError):
        proxy.calls(key)


async def test_accept_unknown_keys_registers_them(model: ScriptedModel) -> None:
    async with CaptureProxy(backend=model, accept_unknown_keys=True) as proxy:
        async with httpx.AsyncClient(base_url=proxy.base_url) as client:
            payload = body("openai-chat", stream=False)
            response = await client.post(
                PATHS["openai-chat"], json=payload, headers=auth("openai-chat", "mine")
            )
        assert response.status_code == 200
        assert [c.key for c in proxy.calls("mine")] == ["mine"]


def test_runs_in_a_thread_for_sync_callers(model: ScriptedModel) -> None:
    with scripted_proxy_thread(model) as proxy:
        key = proxy.new_episode_key()
        response = httpx.post(
            f"{proxy.base_url}/v1/messages",
            json=body("anthropic", stream=True),
            headers=auth("anthropic", key),
            timeout=10,
        )
        assert response.status_code == 200
        assert proxy.calls(key)[0].response is not None
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{proxy.base_url}/health", timeout=2)


async def test_start_twice_and_close_twice(model: ScriptedModel) -> None:
    proxy = CaptureProxy(backend=model)
    await proxy.start()
    with pytest.raises(RuntimeError, match="already running"):
        await proxy.start()
    await proxy.close()
    await proxy.close()
    with pytest.raises(RuntimeError, match="not been started"):
        _ = CaptureProxy().base_url


# --- backends that fail ------------------------------------------------------------------------


async def _serve(backend: Any, dialect: Dialect, stream: bool) -> tuple[httpx.Response, LLMCall]:
    async with CaptureProxy(backend=backend) as proxy:
        key = proxy.new_episode_key()
        async with httpx.AsyncClient(base_url=proxy.base_url) as client:
            response = await client.post(
                PATHS[dialect], json=body(dialect, stream=stream), headers=auth(dialect, key)
            )
        (recorded,) = proxy.calls(key)
        return response, recorded


async def test_backend_error_is_answered_and_recorded() -> None:
    async def overloaded(request: ModelRequest) -> Reply:
        raise BackendError(
            529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
        )

    response, recorded = await _serve(overloaded, "anthropic", False)
    assert response.status_code == 529 and recorded.status == 529
    assert recorded.error == response.json() and recorded.response is None


async def test_backend_crash_is_a_502_not_a_500() -> None:
    async def broken(request: ModelRequest) -> Reply:
        raise RuntimeError("boom")

    response, recorded = await _serve(broken, "openai-chat", False)
    assert response.status_code == 502
    assert "boom" in response.json()["error"]["message"]
    assert recorded.error is not None and recorded.done


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_backend_crash_mid_stream_ends_with_an_error_event(dialect: Dialect) -> None:
    async def half(request: ModelRequest) -> AsyncIterator[SSE]:
        yield SSE("message_start", {"type": "message_start", "message": {"content": []}})
        raise RuntimeError("lost the model")

    async def backend(request: ModelRequest) -> Reply:
        return half(request)

    response, recorded = await _serve(backend, dialect, True)
    assert response.status_code == 200
    assert "lost the model" in response.text.splitlines()[-2]
    assert recorded.error is not None and recorded.done


async def test_no_backend_and_no_upstream_is_a_503() -> None:
    response, recorded = await _serve(None, "openai-responses", False)
    assert response.status_code == 503 and recorded.status == 503


async def test_events_for_a_non_streamed_request_are_folded() -> None:
    model = ScriptedModel([say("hi")])

    async def always_stream(request: ModelRequest) -> Reply:
        streamed = ModelRequest(
            request.dialect, request.key, request.path, request.body | {"stream": True}
        )
        return await model(streamed)

    response, recorded = await _serve(always_stream, "anthropic", False)
    assert response.json()["content"] == [{"type": "text", "text": "hi"}]
    assert recorded.response == response.json()


async def test_sync_backend_is_accepted() -> None:
    def sync_backend(request: ModelRequest) -> dict[str, Any]:
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": "sync"}}]}

    response, _ = await _serve(sync_backend, "openai-chat", False)
    assert response.json()["choices"][0]["message"]["content"] == "sync"


async def test_backend_crash_while_folding_events_is_a_502() -> None:
    async def events() -> AsyncIterator[SSE]:
        yield SSE("ping", {"type": "ping"})
        raise RuntimeError("broke while folding")

    async def backend(request: ModelRequest) -> Reply:
        return events()

    response, recorded = await _serve(backend, "anthropic", False)
    assert response.status_code == 502 and recorded.status == 502
