"""The contract between the capture proxy and an in-process model ("backend").

A backend is an async callable that receives one `ModelRequest` and returns either a JSON body
(a `dict`, sent as a 200 response) or, for a streaming request, an iterable of `SSE` events in
the dialect's own event sequence. It may raise `BackendError` to answer with an error status.

Example:
    >>> async def echo(request: ModelRequest) -> Reply:
    ...     return {"echo": request.body.get("model")}
    >>> SSE("message_stop", {"type": "message_stop"}).encode()
    b'event: message_stop\\ndata: {"type":"message_stop"}\\n\\n'
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DIALECTS",
    "SSE",
    "Backend",
    "BackendError",
    "Dialect",
    "ModelRequest",
    "Reply",
]

Dialect = Literal["anthropic", "openai-chat", "openai-responses"]
"""The three model APIs the proxy speaks: Anthropic Messages (`POST /v1/messages`), OpenAI Chat
Completions (`POST /v1/chat/completions`) and OpenAI Responses (`POST /v1/responses`)."""

DIALECTS: tuple[Dialect, ...] = ("anthropic", "openai-chat", "openai-responses")


@dataclass(frozen=True, slots=True)
class SSE:
    """One server-sent event. `data` is JSON-encoded unless it is already a `str` (`"[DONE]"`)."""

    event: str | None
    data: Any

    def encode(self) -> bytes:
        data = (
            self.data
            if isinstance(self.data, str)
            else json.dumps(self.data, separators=(",", ":"))
        )
        head = f"event: {self.event}\n" if self.event else ""
        return f"{head}data: {data}\n\n".encode()


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One model API call as the backend sees it.

    Attributes:
        dialect: which API the harness spoke.
        key: the per-episode API key that routed the call (see `CaptureProxy.new_episode_key`).
        path: the request path, e.g. `/v1/messages`.
        body: the parsed JSON request body.
        headers: request headers without credentials.
    """

    dialect: Dialect
    key: str
    path: str
    body: dict[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict[str, str])

    @property
    def stream(self) -> bool:
        """Whether the harness asked for a streamed (SSE) answer."""
        return bool(self.body.get("stream"))

    @property
    def model(self) -> str:
        """The `model` field of the request (empty when absent)."""
        model = self.body.get("model")
        return model if isinstance(model, str) else ""


Reply = dict[str, Any] | Iterable[SSE] | AsyncIterable[SSE]
"""What a backend returns: a JSON body, or SSE events (sync or async iterable) for a stream."""

Backend = Callable[[ModelRequest], Awaitable[Reply]]
"""An in-process model: `async def backend(request: ModelRequest) -> Reply`."""


class BackendError(Exception):
    """Raised by a backend to answer with `status` and a JSON `body` (e.g. a 429 or a 400).

    The proxy records the call with this status and error body.
    """

    def __init__(self, status: int, body: Mapping[str, Any]) -> None:
        super().__init__(f"backend error {status}: {body}")
        self.status = status
        self.body = dict(body)
