"""HTTP replies every route family shares: strict JSON responses and bounded, strictly parsed
request bodies."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpgym.errors import ExecutionError, FrameTooLarge, InvalidRequest, MCPGymError
from mcpgym.servers import wire_json

__all__ = ["StrictJSONResponse", "error_response", "json_body", "json_reply"]


class StrictJSONResponse(JSONResponse):
    """A JSON response that is always strict JSON: a payload JSON cannot carry (an environment
    returned NaN or an object) becomes an `EXECUTION_ERROR` body instead of a crash."""

    def render(self, content: Any) -> bytes:
        try:
            return wire_json.dumps(content).encode("utf-8")
        except (TypeError, ValueError) as exc:
            self.status_code = 500
            err = ExecutionError(f"the reply cannot be sent as JSON: {str(exc)[:200]}")
            return wire_json.dumps({"error": err.to_dict()}).encode("utf-8")


async def json_reply(content: Any, status_code: int = 200) -> Response:
    """A `StrictJSONResponse`, encoded part by part in a worker thread when it may be big
    (`wire_json.encode_reply`): a large reply must not hold the event loop."""
    if wire_json.is_small(content):
        return StrictJSONResponse(content, status_code=status_code)
    try:
        body = await wire_json.encode_reply(content)
    except (TypeError, ValueError) as exc:
        err = ExecutionError(f"the reply cannot be sent as JSON: {str(exc)[:200]}")
        return StrictJSONResponse({"error": err.to_dict()}, status_code=500)
    return Response(body.encode("utf-8"), status_code, media_type="application/json")


def error_response(err: MCPGymError) -> JSONResponse:
    """`err` as a strict JSON `{"error": ...}` reply with its HTTP status."""
    return StrictJSONResponse({"error": err.to_dict()}, status_code=err.http_status)


async def json_body(request: Request) -> dict[str, Any]:
    """The body as a JSON object (empty: `{}`), within `max_frame_bytes`, strictly parsed."""
    limit: int = request.app.state.settings.max_frame_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise FrameTooLarge(f"body of {declared} bytes exceeds the limit of {limit}", limit=limit)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise FrameTooLarge(f"body exceeds the limit of {limit} bytes", limit=limit)
    if not body.strip():
        return {}
    data = wire_json.loads(body, "body")
    if not isinstance(data, dict):
        raise InvalidRequest("body must be a JSON object")
    return data
