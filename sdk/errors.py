"""Every error mcpgym raises, in one tree.

Each class carries its wire code (the WebSocket `error.code`), the HTTP status it maps to and the
JSON-RPC code used on MCP transports, so transports translate errors without a table of their own::

    MCPGymError
    ├── ProtocolError            the client sent something we cannot accept (4xx)
    │   ├── InvalidJSON          INVALID_JSON       400  -32700
    │   ├── UnknownMessageType   UNKNOWN_TYPE       400  -32601
    │   ├── InvalidRequest       VALIDATION_ERROR   422  -32602
    │   └── FrameTooLarge        VALIDATION_ERROR   413  -32600
    ├── SessionError             SESSION_ERROR      409  -32000  (e.g. step before reset)
    │   ├── CapacityReached      CAPACITY_REACHED   503  -32000
    │   │   └── QuotaReached     QUOTA_REACHED      429  -32000  (the caller's own share is used)
    │   └── InstanceBusy         SESSION_ERROR      409  -32000  (a timed-out call still runs)
    ├── ExecutionError           EXECUTION_ERROR    500  -32603  (the environment raised)
    │   ├── StepTimeout          EXECUTION_ERROR    504  -32603
    │   └── RubricError          a rubric failed (mcpgym.rubrics)
    │       └── JudgeError       an LLMJudge got no usable score (mcpgym.rubrics.judge)
    ├── AuthError                UNAUTHORIZED       401  -32001
    ├── ToolError                tool failures are *data* for the agent, never a protocol error
    │   ├── ToolNotFound         tool_not_found
    │   ├── InvalidToolArguments invalid_args
    │   ├── ToolExecutionError   execution_error
    │   │   └── ResultTooLarge   execution_error, reason RESULT_TOO_LARGE (the result was dropped)
    │   └── ToolTimeout          timeout
    ├── EnvironmentDefinitionError   an environment class is malformed (raised at class creation)
    └── ClientError              raised by clients
        ├── ServerGone           the connection dropped or the server is unreachable
        ├── RequestTimeout       no reply within the client's timeout
        └── RemoteError          the server answered with an error frame (`.remote_code`, `.detail`)

A tool failure is data for the agent (`CallToolObservation.error`, or `isError: true` on MCP); a
protocol failure is an error for the client; an environment crash is an `EXECUTION_ERROR` for that
session only.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "AuthError",
    "CapacityReached",
    "ClientError",
    "EnvironmentDefinitionError",
    "ExecutionError",
    "FrameTooLarge",
    "InstanceBusy",
    "InvalidJSON",
    "InvalidRequest",
    "InvalidToolArguments",
    "MCPGymError",
    "ProtocolError",
    "QuotaReached",
    "RemoteError",
    "RequestTimeout",
    "ResultTooLarge",
    "ServerGone",
    "SessionError",
    "StepTimeout",
    "ToolError",
    "ToolExecutionError",
    "ToolNotFound",
    "ToolTimeout",
    "UnknownMessageType",
]


class MCPGymError(Exception):
    """Root of the tree. `detail` holds structured fields that travel with the error."""

    code: ClassVar[str] = "EXECUTION_ERROR"
    http_status: ClassVar[int] = 500
    jsonrpc_code: ClassVar[int] = -32603

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def to_dict(self) -> dict[str, Any]:
        """The wire form: `{"code", "message", **detail}`."""
        return {"code": self.code, "message": self.message, **self.detail}


class ProtocolError(MCPGymError):
    """The client sent something the server cannot accept."""

    code = "VALIDATION_ERROR"
    http_status = 400
    jsonrpc_code = -32600


class InvalidJSON(ProtocolError):
    code = "INVALID_JSON"
    http_status = 400
    jsonrpc_code = -32700


class UnknownMessageType(ProtocolError):
    code = "UNKNOWN_TYPE"
    http_status = 400
    jsonrpc_code = -32601


class InvalidRequest(ProtocolError):
    """A well-formed message whose content fails validation (`errors` lists each problem)."""

    code = "VALIDATION_ERROR"
    http_status = 422
    jsonrpc_code = -32602


class FrameTooLarge(ProtocolError):
    code = "VALIDATION_ERROR"
    http_status = 413
    jsonrpc_code = -32600


class SessionError(MCPGymError):
    """The request does not fit the session's state (for example `step` before `reset`)."""

    code = "SESSION_ERROR"
    http_status = 409
    jsonrpc_code = -32000


class CapacityReached(SessionError):
    code = "CAPACITY_REACHED"
    http_status = 503


class QuotaReached(CapacityReached):
    """The caller holds as many sessions (or queued calls) as one caller may; retry later."""

    code = "QUOTA_REACHED"
    http_status = 429


class InstanceBusy(SessionError):
    """The instance is still running a sync call that timed out; a thread cannot be stopped, so
    the instance refuses calls until that one returns (`call`, `overdue_s` say which and since
    when). Other sessions are unaffected."""


class ExecutionError(MCPGymError):
    """The environment itself raised; only the session that made the call is affected."""

    code = "EXECUTION_ERROR"
    http_status = 500
    jsonrpc_code = -32603


class StepTimeout(ExecutionError):
    http_status = 504


class AuthError(MCPGymError):
    code = "UNAUTHORIZED"
    http_status = 401
    jsonrpc_code = -32001


class ToolError(MCPGymError):
    """A tool call failed; rendered as data (`error_type`, `message`, detail) for the agent."""

    error_type: ClassVar[str] = "execution_error"
    code = "TOOL_ERROR"
    http_status = 200

    def to_info(self) -> dict[str, Any]:
        """The `CallToolObservation.error` form."""
        return {"error_type": self.error_type, "message": self.message, **self.detail}


class ToolNotFound(ToolError):
    error_type = "tool_not_found"
    jsonrpc_code = -32602


class InvalidToolArguments(ToolError):
    error_type = "invalid_args"


class ToolExecutionError(ToolError):
    error_type = "execution_error"


class ResultTooLarge(ToolExecutionError):
    """A tool's result is larger than the server sends: the call ran, its result was dropped.

    The agent reads `reason`, `limit_bytes` and `size_at_least`, and asks for less.
    """

    def __init__(self, tool: str, limit: int, size: int) -> None:
        super().__init__(
            f"the result of tool {tool!r} is larger than this server sends ({limit} bytes of "
            f"JSON; it had at least {size}): the call ran, but its result was dropped. Ask for "
            "less: a narrower query, a smaller page or range, fewer fields",
            tool=tool,
            reason="RESULT_TOO_LARGE",
            limit_bytes=limit,
            size_at_least=size,
        )


class ToolTimeout(ToolError):
    error_type = "timeout"


class EnvironmentDefinitionError(MCPGymError, TypeError):
    """An environment class is malformed: a reserved tool name, an unsupported type hint, …"""


class ClientError(MCPGymError):
    """Raised by `EnvClient` and friends."""


class ServerGone(ClientError):
    """The server closed the connection or cannot be reached."""


class RequestTimeout(ClientError):
    """No reply arrived within the client's timeout."""


class RemoteError(ClientError):
    """The server answered with an error frame; `code` is the server's code."""

    def __init__(self, code: str, message: str, **detail: Any) -> None:
        super().__init__(message, **detail)
        self.remote_code = code

    def __str__(self) -> str:
        return f"{self.remote_code}: {self.message}"
