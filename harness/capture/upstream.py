"""Forwarding to a real model API: `Upstream` says where, `forward` moves one call there.

The harness's per-episode key is replaced by the upstream's real key (Anthropic: `x-api-key`;
OpenAI: `Authorization: Bearer`); other headers pass through, bar hop-by-hop ones. Streams pass
through byte for byte while the proxy parses a copy for its record.

Example:
    >>> up = Upstream("https://api.anthropic.com/v1/", api_key="sk-...")
    >>> up.url_for("/v1/messages", "beta=true")
    'https://api.anthropic.com/v1/messages?beta=true'
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from mcpgym.harness.capture.backend import Dialect

__all__ = ["Upstream", "UpstreamResponse", "forward"]

_DROP = {
    "host",
    "content-length",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "proxy-connection",
    "authorization",
    "x-api-key",
    "api-key",
    "accept-encoding",
    "cookie",
}


@dataclass(frozen=True, slots=True)
class Upstream:
    """A real model endpoint.

    Attributes:
        base_url: the API root *including* its version prefix, e.g. `https://api.anthropic.com/v1`,
            `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1` (vLLM). The proxy appends the
            request path after its own `/v1`.
        api_key: the real key (sent instead of the episode key); empty sends none.
        model: when set, replaces the request's `model` (a harness asks for `claude-sonnet-4-5`,
            the upstream serves `Qwen/Qwen3-8B`).
        extra_body: merged into every request body, e.g. `{"return_token_ids": True}` for vLLM.
        headers: extra headers for every request.
        timeout: seconds for connect/read of one call.
    """

    base_url: str
    api_key: str = ""
    model: str | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict[str, Any])
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    timeout: float = 600.0

    def url_for(self, path: str, query: str = "") -> str:
        url = self.base_url.rstrip("/") + path.removeprefix("/v1")
        return f"{url}?{query}" if query else url

    def body_for(self, body: dict[str, Any]) -> dict[str, Any]:
        out = body | dict(self.extra_body)
        if self.model:
            out["model"] = self.model
        return out

    def headers_for(self, dialect: Dialect, incoming: Mapping[str, str]) -> dict[str, str]:
        headers = {k: v for k, v in incoming.items() if k.lower() not in _DROP}
        headers["accept-encoding"] = "identity"  # the proxy parses the stream it passes on
        if self.api_key:
            if dialect == "anthropic":
                headers["x-api-key"] = self.api_key
            else:
                headers["authorization"] = f"Bearer {self.api_key}"
        return headers | dict(self.headers)


@dataclass
class UpstreamResponse:
    status: int
    content_type: str
    response: httpx.Response

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.aiter_bytes():
                yield chunk
        finally:
            await self.response.aclose()


async def forward(
    client: httpx.AsyncClient,
    upstream: Upstream,
    dialect: Dialect,
    method: str,
    path: str,
    query: str,
    headers: Mapping[str, str],
    body: dict[str, Any] | None,
) -> UpstreamResponse:
    """Send one call upstream and return the open response (the caller reads and closes it)."""
    request = client.build_request(
        method,
        upstream.url_for(path, query),
        headers=upstream.headers_for(dialect, headers),
        json=upstream.body_for(body) if body is not None else None,
        timeout=upstream.timeout,
    )
    response = await client.send(request, stream=True)
    content_type = response.headers.get("content-type", "application/json")
    return UpstreamResponse(response.status_code, content_type, response)
