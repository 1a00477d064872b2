"""The benchmark floor: a bare Starlette + uvicorn echo app, served exactly like `mcpgym serve`.

It does the least work any JSON-over-WebSocket/HTTP server must do per message: json-decode the
request and json-encode a reply of about the size and shape of an mcpgym observation. Whatever
mcpgym costs above this is framework overhead (sessions, validation, pydantic, dispatch).

Run: `python bench/_floor.py --port 8001` (bench/run.py starts it as a subprocess).

`UVICORN_SETTINGS` is the single source of the server settings both servers share: it mirrors the
`uvicorn.run(...)` call of `mcpgym serve` (servers/cli.py) and pins what uvicorn's "auto" choices
resolve to in this virtual environment (see `resolve_auto`), so the two servers differ only in the
application.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["UVICORN_SETTINGS", "create_floor_app", "resolve_auto"]

# What `mcpgym serve` passes to uvicorn.run (servers/cli.py), plus the implementations uvicorn's
# "auto" picks when uvloop, httptools and websockets are installed (checked by bench/run.py).
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


def create_floor_app() -> Any:
    """`/health` (GET), `/step` and `/reset` (POST JSON echo), `/ws` (JSON frame echo)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route, WebSocketRoute
    from starlette.websockets import WebSocket, WebSocketDisconnect

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "healthy"})

    async def step(request: Request) -> JSONResponse:
        body = await request.json()
        return JSONResponse(_reply({"data": body}))

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
            WebSocketRoute("/ws", ws),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="bare Starlette+uvicorn echo floor")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    import uvicorn

    uvicorn.run(create_floor_app(), host=args.host, port=args.port, **UVICORN_SETTINGS)


if __name__ == "__main__":
    main()
