"""Answer one JSON-RPC request dict with the MCP `Server`, in-process.

Used by the WebSocket `{"type":"mcp"}` frame: the request runs against the WebSocket session's own
environment. It goes through the `mcp` package's single-exchange driver (`serve_one`) on a
born-ready connection, so method dispatch, parameter validation and error mapping are the official
package's, not ours.
"""

from __future__ import annotations

# First: `mcp` then loads without its client side (servers/mcp/lean.py).
from mcpgym.servers.mcp import lean as mcp_lean  # noqa: F401  # pyright: ignore[reportUnusedImport]

# isort: split

from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import modern_error_data, serve_one
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import INVALID_REQUEST, JSONRPCNotification, JSONRPCRequest
from pydantic import ValidationError

from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.mcp.server import CURRENT_ENV

__all__ = ["answer_jsonrpc"]

PROTOCOL_VERSION = "2025-11-25"


@dataclass
class _FrameContext:
    """The dispatch context of one WebSocket `mcp` frame: no back channel to the client."""

    request_id: Any
    message_metadata: ServerMessageMetadata
    transport: TransportContext = field(
        default_factory=lambda: TransportContext(kind="websocket", can_send_request=False)
    )
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Any, opts: Any = None) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


async def answer_jsonrpc(
    server: Server[Any], env: MCPEnvironment, message: Any
) -> dict[str, Any] | None:
    """The JSON-RPC response to `message` from `env`'s tools; `None` for a notification."""
    if isinstance(message, dict) and "id" not in message:
        try:
            JSONRPCNotification.model_validate(message)
            return None
        except ValidationError:
            pass
    try:
        request = JSONRPCRequest.model_validate(message)
    except ValidationError:
        rid = message.get("id") if isinstance(message, dict) else None
        return {
            "jsonrpc": "2.0",
            "id": rid if isinstance(rid, str | int) else None,
            "error": {"code": INVALID_REQUEST, "message": "Invalid JSON-RPC request"},
        }
    token = CURRENT_ENV.set(env)
    try:
        connection = Connection.from_envelope(PROTOCOL_VERSION, None, None)
        ctx = _FrameContext(request.id, ServerMessageMetadata(request_context=None))
        result = await serve_one(
            server, ctx, request.method, request.params, connection=connection, lifespan_state={}
        )
        return {"jsonrpc": "2.0", "id": request.id, "result": result}
    except Exception as exc:
        error = modern_error_data(exc)
        return {
            "jsonrpc": "2.0",
            "id": request.id,
            "error": error.model_dump(mode="json", exclude_none=True),
        }
    finally:
        CURRENT_ENV.reset(token)
