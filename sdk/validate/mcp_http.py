"""A minimal Streamable HTTP MCP exchange for the validator: initialize, then requests.

The validator checks what `/mcp` really serves in each mode without the `mcp` client package
(heavy to import); JSON-RPC bodies are small and the reply is JSON or one SSE event.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

__all__ = ["McpHttp"]

_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class McpHttp:
    """One MCP session on `{base_url}/mcp` (protocol 2025-11-25)."""

    def __init__(self, base_url: str, *, timeout: float = 10.0) -> None:
        self.url = base_url.rstrip("/") + "/mcp"
        self.http = httpx.Client(timeout=timeout, trust_env=False)
        self.headers = dict(_HEADERS)
        self._id = 0
        init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "mcpgym-validate", "version": "1"},
            },
        )
        if "error" in init:
            raise RuntimeError(f"initialize failed: {init['error']}")
        self.http.post(
            self.url,
            headers=self.headers,
            content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one JSON-RPC request; returns the response object (result or error)."""
        self._id += 1
        body = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": params or {}}
        resp = self.http.post(self.url, headers=self.headers, content=json.dumps(body))
        sid = resp.headers.get("mcp-session-id")
        if sid:
            self.headers["Mcp-Session-Id"] = sid
        if resp.status_code >= 400 and not resp.content:
            return {"error": {"code": resp.status_code, "message": f"HTTP {resp.status_code}"}}
        text = resp.text
        if resp.headers.get("content-type", "").startswith("text/event-stream"):
            datas = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
            text = datas[-1] if datas else "{}"
        try:
            return json.loads(text)
        except ValueError:
            return {"error": {"code": resp.status_code, "message": text[:300]}}

    def tools(self) -> list[dict[str, Any]]:
        """`tools/list` (every page)."""
        out: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            reply = self.request("tools/list", {"cursor": cursor} if cursor else {})
            result = reply.get("result") or {}
            out += result.get("tools") or []
            cursor = result.get("nextCursor")
            if not cursor:
                return out

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()
