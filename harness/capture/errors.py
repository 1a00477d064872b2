"""Error bodies in each dialect's own shape, so a harness reports them as its API would.

Anthropic: `{"type": "error", "error": {"type", "message"}}`; OpenAI: `{"error": {"message",
"type", "param", "code"}}`. Where the dialect is unknown (an unknown path) the body carries both.

Example:
    >>> error_body("anthropic", 401, "unknown key")
    {'type': 'error', 'error': {'type': 'authentication_error', 'message': 'unknown key'}}
    >>> error_body("openai-chat", 404, "no such path")["error"]["code"]
    'not_found'
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from mcpgym.harness.capture.backend import SSE, Dialect

__all__ = ["error_body", "error_event", "error_response"]

_TYPES = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("authentication_error", "invalid_api_key"),
    404: ("not_found_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    413: ("request_too_large", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
    502: ("api_error", "upstream_error"),
    503: ("overloaded_error", "no_model"),
}


def error_body(dialect: Dialect | None, status: int, message: str) -> dict[str, Any]:
    anthropic_type, code = _TYPES.get(status, ("api_error", "server_error"))
    if dialect == "anthropic":
        return {"type": "error", "error": {"type": anthropic_type, "message": message}}
    if dialect is None:  # readable by both families of clients
        error = {"type": anthropic_type, "message": message, "param": None, "code": code}
        return {"type": "error", "error": error}
    openai_type = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": openai_type, "param": None, "code": code}}


def error_response(dialect: Dialect | None, status: int, message: str) -> JSONResponse:
    return JSONResponse(error_body(dialect, status, message), status_code=status)


def error_event(dialect: Dialect, message: str) -> SSE:
    """The event a stream ends with when its producer fails half-way."""
    if dialect == "anthropic":
        return SSE("error", error_body("anthropic", 500, message))
    if dialect == "openai-chat":
        return SSE(None, error_body("openai-chat", 500, message))
    error = {"type": "error", "code": "server_error", "message": message, "param": None}
    return SSE("error", error)
