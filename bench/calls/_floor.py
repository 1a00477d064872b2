"""The benchmark floor: a bare Starlette + uvicorn echo app, served exactly like `mcpgym serve`.

It does the least work any JSON-over-WebSocket/HTTP server must do per message: json-decode the
request and json-encode a reply of about the size and shape of an mcpgym observation. Whatever
mcpgym costs above this is framework overhead (sessions, validation, pydantic, dispatch).

`/mcp` is the same for JSON-RPC: it decodes the request and answers `initialize` and `tools/call`
with results shaped and sized like mcpgym's (`_rpc_reply`), a notification with 202, and echoes
the `Mcp-Session-Id` header; it keeps no sessions and checks nothing, so above it is what the
`mcp` package's Streamable HTTP transport, its session and mcpgym's tool call cost.

Run: `python bench/calls/_floor.py --port 8001` (bench/run.py starts it as a subprocess).

`UVICORN_SETTINGS` is the single source of the server settings both servers share: it mirrors
the `uvicorn.run(...)` call of `mcpgym serve` (servers/cli/serve.py) and pins what uvicorn's
"auto" choices resolve to in this virtual environment (see `resolve_auto`), so the two servers
differ only in the application. The floor also gets `mcpgym serve`'s garbage-collector settings
(servers/gc_tuning.py, loaded as a file: `gc_tuning()`), so neither side is measured with a
collector the other lacks.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["LEGACY_SETTINGS", "UVICORN_SETTINGS", "create_floor_app", "resolve_auto"]

# What `mcpgym serve` passes to uvicorn.run (servers/cli/serve.py), plus the implementations
# uvicorn's "auto" picks when uvloop, httptools and websockets are installed (checked by
# bench/run.py).
_MAX_FRAME_BYTES = 4 * 1024 * 1024
UVICORN_SETTINGS: dict[str, Any] = {
    "loop": "uvloop",
    "http": "httptools",
    "ws": "websockets-sansio",
    "log_level": "warning",
    "ws_max_size": _MAX_FRAME_BYTES * 2,
    "ws_ping_interval": 20.0,
    "ws_ping_timeout": 20.0,
    "timeout_graceful_shutdown": 5,
}


# The floor before issue 17: the same app on uvicorn's pure-Python stack (asyncio loop, h11,
# the `websockets` legacy protocol), kept as a second floor column (`--legacy`).
LEGACY_SETTINGS: dict[str, Any] = UVICORN_SETTINGS | {
    "loop": "asyncio",
    "http": "h11",
    "ws": "websockets",
}


def resolve_auto() -> dict[str, str]:
    """What uvicorn's `loop="auto"`, `http="auto"`, `ws="auto"` resolve to in this interpreter."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol
    from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:
        loop = "asyncio"
    http = {"HttpToolsProtocol": "httptools", "H11Protocol": "h11"}.get(
        AutoHTTPProtocol.__name__, AutoHTTPProtocol.__name__
    )
    ws_name = getattr(AutoWebSocketsProtocol, "__name__", "none")
    ws = {
        "WebSocketsSansIOProtocol": "websockets-sansio",
        "WebSocketProtocol": "websockets",
        "WSProtocol": "wsproto",
    }.get(ws_name, ws_name)
    return {"loop": loop, "http": http, "ws": ws}


def _reply(msg: Any) -> dict[str, Any]:
    """An observation-shaped reply built from the request (same size class as mcpgym's)."""
    data = msg.get("data") if isinstance(msg, dict) else None
    if isinstance(data, dict) and "action" in data:  # HTTP /step body
        data = data["action"]
    tool = data.get("tool_name") if isinstance(data, dict) else None
    args = data.get("arguments") if isinstance(data, dict) else None
    return {
        "observation": {
            "metadata": {},
            "tool_name": tool,
            "result": {"verdict": "higher", "guesses": len(args) if isinstance(args, dict) else 0},
            "error": None,
        },
        "reward": -0.01,
        "done": False,
    }


def _rpc_reply(msg: Any) -> dict[str, Any]:
    """A JSON-RPC result shaped like mcpgym's for `initialize` and for a `guess` tool call."""
    if not isinstance(msg, dict):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid"}}
    if msg.get("method") == "initialize":
        result: dict[str, Any] = {
            "capabilities": {"logging": {}, "tools": {"listChanged": False}},
            "instructions": "A bare JSON-RPC endpoint: decodes the request, encodes a reply.",
            "protocolVersion": "2025-11-25",
            "serverInfo": {"name": "floor", "version": "1.0.0"},
        }
    else:
        params = msg.get("params")
        args = params.get("arguments") if isinstance(params, dict) else None
        value = {"verdict": "higher", "guesses": len(args) if isinstance(args, dict) else 0}
        result = {
            "content": [{"text": json.dumps(value), "type": "text"}],
            "isError": False,
            "structuredContent": value,
        }
    return {"jsonrpc": "2.0", "id": msg.get("id"), "result": result}


def create_floor_app() -> Any:
    """`/health` (GET), `/step` and `/reset` (POST JSON echo), `/ws` (JSON frame echo), `/mcp`
    (POST JSON-RPC echo, DELETE)."""
    import uuid

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "healthy"})

    async def step(request: Request) -> JSONResponse:
        body = await request.json()
        return JSONResponse(_reply({"data": body}))

    async def mcp(request: Request) -> Response:
        session = {"mcp-session-id": request.headers.get("mcp-session-id") or uuid.uuid4().hex}
        if request.method == "DELETE":
            return Response(headers=session)
        msg = json.loads(await request.body())
        if isinstance(msg, dict) and "id" not in msg:  # a notification
            return Response(status_code=202, headers=session, media_type="application/json")
        return JSONResponse(_rpc_reply(msg), headers=session)

    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            while True:
                msg = json.loads(await websocket.receive_text())
                reply = {"type": "observation", "data": _reply(msg)}
                if isinstance(msg, dict) and "id" in msg:
                    reply["id"] = msg["id"]
                await websocket.send_text(json.dumps(reply, separators=(",", ":")))
        except WebSocketDisconnect:
            return

    return Starlette(
        routes=[
            Route("/health", health, methods=["GET"]),
            Route("/step", step, methods=["POST"]),
            Route("/reset", step, methods=["POST"]),
            Route("/mcp", mcp, methods=["POST", "DELETE"]),
            WebSocketRoute("/ws", ws),
        ]
    )


def gc_tuning() -> Any:
    """servers/gc_tuning.py, loaded as a file: `mcpgym serve`'s collector settings without
    importing mcpgym (the floor's start-up time and RSS stay those of the bare app)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "servers" / "gc_tuning.py"
    spec = importlib.util.spec_from_file_location("_floor_gc_tuning", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description="bare Starlette+uvicorn echo floor")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--legacy", action="store_true", help="asyncio + h11 + websockets (the old floor)"
    )
    args = parser.parse_args()
    import uvicorn

    settings = LEGACY_SETTINGS if args.legacy else UVICORN_SETTINGS
    app = create_floor_app()
    gc_tuning().tune(app)  # the collector settings `mcpgym serve` applies
    uvicorn.run(app, host=args.host, port=args.port, **settings)


if __name__ == "__main__":
    main()
