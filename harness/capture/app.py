"""The proxy's Starlette app: model-call routes for the three dialects, model listing, and the
recording of every call under its episode key.

Routes: `POST /v1/messages`, `POST /v1/messages/count_tokens` (Anthropic), `POST
/v1/chat/completions` (OpenAI Chat), `POST /v1/responses` (OpenAI Responses), `GET /v1/models`,
`GET /v1/models/{id}` (OpenAI or Anthropic shape, by the `anthropic-version` header), `GET
/health`. Bad input is a structured 4xx in the dialect's error shape, never a 500.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, cast

import httpx
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from mcpgym.harness.capture.backend import SSE, Backend, BackendError, Dialect, ModelRequest
from mcpgym.harness.capture.errors import error_event, error_response
from mcpgym.harness.capture.listing import models_body
from mcpgym.harness.capture.records import LLMCall, token_ids_of, usage_of
from mcpgym.harness.capture.store import CallStore
from mcpgym.harness.capture.streams import SSEParser, reassembler_for
from mcpgym.harness.capture.upstream import Upstream, forward

__all__ = ["build_app", "key_of"]

_SECRET_HEADERS = {"authorization", "x-api-key", "api-key", "cookie", "proxy-authorization"}


def key_of(headers: Mapping[str, str]) -> str:
    """The episode key a request carries: `x-api-key`, else `Authorization: Bearer`."""
    key = headers.get("x-api-key") or headers.get("api-key") or ""
    if not key:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else ""
    return key


async def _events(reply: Any) -> AsyncIterator[SSE]:
    if hasattr(reply, "__aiter__"):
        async for event in reply:
            yield event
    else:
        for event in reply:
            yield event


class _Handler:
    def __init__(
        self,
        store: CallStore,
        backend: Backend | None,
        upstreams: Mapping[Dialect, Upstream],
        models: list[str],
    ) -> None:
        self.store, self.backend, self.upstreams, self.models = store, backend, upstreams, models
        self.http = httpx.AsyncClient(timeout=None)

    # --- model calls -------------------------------------------------------------------------

    async def call(self, request: Request, dialect: Dialect) -> Response:
        key = key_of(request.headers)
        if not self.store.known(key):
            return error_response(dialect, 401, "unknown API key: use a key from new_episode_key()")
        try:
            body = json.loads(await request.body())
        except ValueError as exc:
            return error_response(dialect, 400, f"request body is not valid JSON: {exc}")
        if not isinstance(body, dict):
            return error_response(dialect, 400, "request body must be a JSON object")
        headers = {k: v for k, v in request.headers.items() if k not in _SECRET_HEADERS}
        upstream = self.upstreams.get(dialect)
        call = LLMCall(
            key=key,
            index=0,
            dialect=dialect,
            path=request.url.path,
            model=str(body.get("model", "")),
            stream=bool(body.get("stream")),
            request=body,
            headers=headers,
            started_at=time.time(),
            upstream=upstream.base_url if upstream else "backend",
        )
        self.store.begin(call)
        t0 = time.monotonic()
        if upstream is not None:
            return await self._upstream(call, upstream, request, t0)
        if self.backend is None:
            return self._finish_error(call, t0, 503, "the proxy has no backend and no upstream")
        try:
            reply = self.backend(ModelRequest(dialect, key, call.path, body, headers))
            if inspect.isawaitable(reply):
                reply = await reply
        except BackendError as exc:
            self._finish(call, t0, exc.status, None, exc.body)
            return JSONResponse(exc.body, status_code=exc.status)
        except Exception as exc:
            return self._finish_error(call, t0, 502, f"backend failed: {exc!r}")
        if isinstance(reply, dict):
            answer = cast(dict[str, Any], reply)
            self._finish(call, t0, 200, answer, None)
            return JSONResponse(answer)
        if not call.stream:  # events for a non-streamed request: answer with the folded body
            folder = reassembler_for(dialect)
            try:
                async for event in _events(reply):
                    folder.feed(event)
            except Exception as exc:
                return self._finish_error(call, t0, 502, f"backend failed: {exc!r}")
            self._finish(call, t0, 200, folder.result(), folder.error)
            return JSONResponse(folder.result())
        return StreamingResponse(
            self._relay(call, t0, _events(reply)), media_type="text/event-stream"
        )

    async def _relay(
        self, call: LLMCall, t0: float, events: AsyncIterator[SSE]
    ) -> AsyncIterator[bytes]:
        folder = reassembler_for(call.dialect)
        error: dict[str, Any] | None = None
        try:
            async for event in events:
                if call.first_byte_s is None:
                    call.first_byte_s = time.monotonic() - t0
                folder.feed(event)
                yield event.encode()
        except Exception as exc:
            failure = error_event(call.dialect, f"backend failed mid-stream: {exc!r}")
            error = failure.data
            yield failure.encode()
        finally:
            self._finish(call, t0, 200, folder.result(), error or folder.error)

    async def _upstream(
        self, call: LLMCall, upstream: Upstream, request: Request, t0: float
    ) -> Response:
        try:
            up = await forward(
                self.http,
                upstream,
                call.dialect,
                "POST",
                call.path,
                request.url.query,
                request.headers,
                call.request,
            )
        except httpx.HTTPError as exc:
            return self._finish_error(call, t0, 502, f"upstream unreachable: {exc!r}")
        if up.status >= 400 or "text/event-stream" not in up.content_type:
            raw = await up.response.aread()
            await up.response.aclose()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = {"raw": raw.decode(errors="replace")}
            ok = up.status < 400
            self._finish(call, t0, up.status, parsed if ok else None, None if ok else parsed)
            return Response(raw, status_code=up.status, media_type=up.content_type)

        async def relay() -> AsyncIterator[bytes]:
            parser, folder = SSEParser(), reassembler_for(call.dialect)
            try:
                async for chunk in up.chunks():
                    if call.first_byte_s is None:
                        call.first_byte_s = time.monotonic() - t0
                    for event in parser.feed(chunk):
                        folder.feed(event)
                    yield chunk
            finally:
                self._finish(call, t0, up.status, folder.result(), folder.error)

        return StreamingResponse(relay(), status_code=up.status, media_type=up.content_type)

    def _finish(
        self,
        call: LLMCall,
        t0: float,
        status: int,
        body: dict[str, Any] | None,
        error: dict[str, Any] | None,
    ) -> None:
        call.status, call.response, call.error = status, body, error
        call.usage = usage_of(call.dialect, body)
        call.prompt_token_ids, call.completion_token_ids = token_ids_of(call.dialect, body)
        call.duration_s = time.monotonic() - t0
        self.store.end(call)

    def _finish_error(self, call: LLMCall, t0: float, status: int, message: str) -> Response:
        response = error_response(call.dialect, status, message)
        self._finish(call, t0, status, None, json.loads(bytes(response.body)))
        return response

    # --- everything else ---------------------------------------------------------------------

    async def models_list(self, request: Request) -> Response:
        dialect: Dialect = "anthropic" if "anthropic-version" in request.headers else "openai-chat"
        upstream = self.upstreams.get(dialect)
        if upstream is None and dialect == "openai-chat":
            upstream = self.upstreams.get("openai-responses")
        if upstream is not None:
            return await self._pass_through(request, upstream, dialect)
        model_id = request.path_params.get("model_id")
        if model_id is not None and model_id not in self.models:
            return error_response(dialect, 404, f"no model {model_id!r}")
        return JSONResponse(models_body(self.models, model_id, anthropic=dialect == "anthropic"))

    async def count_tokens(self, request: Request) -> Response:
        if not self.store.known(key_of(request.headers)):
            return error_response("anthropic", 401, "unknown API key")
        if "anthropic" in self.upstreams:
            return await self._pass_through(request, self.upstreams["anthropic"], "anthropic")
        raw = await request.body()
        return JSONResponse({"input_tokens": max(1, len(raw) // 4)})

    async def _pass_through(
        self, request: Request, upstream: Upstream, dialect: Dialect
    ) -> Response:
        body = await request.body()
        try:
            parsed = json.loads(body) if body else None
        except ValueError as exc:
            return error_response(dialect, 400, f"request body is not valid JSON: {exc}")
        try:
            up = await forward(
                self.http,
                upstream,
                dialect,
                request.method,
                request.url.path,
                request.url.query,
                request.headers,
                parsed,
            )
        except httpx.HTTPError as exc:
            return error_response(dialect, 502, f"upstream unreachable: {exc!r}")
        raw = await up.response.aread()
        await up.response.aclose()
        return Response(raw, status_code=up.status, media_type=up.content_type)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    return error_response(None, status, f"{request.method} {request.url.path}: {exc}")


def build_app(
    store: CallStore,
    backend: Backend | None = None,
    upstreams: Mapping[Dialect, Upstream] | None = None,
    models: list[str] | None = None,
) -> Starlette:
    """The proxy app over `store`; see the module docstring for its routes."""
    handler = _Handler(store, backend, dict(upstreams or {}), list(models or ["scripted"]))

    def route(dialect: Dialect) -> Any:
        async def endpoint(request: Request) -> Response:
            return await handler.call(request, dialect)

        return endpoint

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "healthy"})

    routes = [
        Route("/v1/messages", route("anthropic"), methods=["POST"]),
        Route("/v1/messages/count_tokens", handler.count_tokens, methods=["POST"]),
        Route("/v1/chat/completions", route("openai-chat"), methods=["POST"]),
        Route("/v1/responses", route("openai-responses"), methods=["POST"]),
        Route("/v1/models", handler.models_list, methods=["GET"]),
        Route("/v1/models/{model_id:path}", handler.models_list, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        yield
        await handler.http.aclose()

    app = Starlette(
        routes=routes, exception_handlers={HTTPException: _http_error}, lifespan=lifespan
    )
    app.state.handler = handler
    return app
