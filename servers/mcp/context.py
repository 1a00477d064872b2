"""The `ToolContext` of a tool called over MCP: it talks to the client through the request.

- Logs (`notifications/message`) and progress (`notifications/progress`) ride the request's own
  stream. On 2025-11-25 logs honour `logging/setLevel`; on 2026-07-28 only the levels the request
  opted into (`_meta` log level) are sent.
- Sampling and elicitation need the client to have declared the capability. On 2025-11-25 they
  are requests to the client over the request's back channel (stdio, or `/mcp` with SSE
  responses). On 2026-07-28 there are no server-to-client requests: the call returns an
  `InputRequiredResult` naming the question, the client retries the call with the answer, and
  the tool runs again from the start, this time getting the answer where it asked (so a tool
  should ask before it changes anything). Answers of earlier rounds travel in the sealed
  `requestState` (`RequestStateBoundary`), so a tool may ask several questions in turn.
"""

from __future__ import annotations

# First: `mcp` then loads without its client side (servers/mcp/lean.py).
from mcpgym.servers.mcp import lean as mcp_lean  # noqa: F401  # pyright: ignore[reportUnusedImport]

# isort: split

import json
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

import mcp_types as types
from mcp.server.connection import Connection, allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

from mcpgym.context import LOG_LEVELS, Elicitation, LogLevel, ToolContext, elicitation_schema
from mcpgym.errors import ToolError, ToolExecutionError

__all__ = [
    "LOG_LEVEL_KEY",
    "CapabilityMissing",
    "InputRequired",
    "SessionToolContext",
    "mcp_connection",
]

LOG_LEVEL_KEY = "mcpgym_log_level"
"""Where `logging/setLevel` keeps a 2025-11-25 connection's threshold (connection state)."""


def mcp_connection(request: Any) -> Connection:
    """The MCP `Connection` a request arrived on: its per-connection `state` and `exit_stack`.

    mcp 2.0 … 2.3 hand low-level handlers a `ServerRequestContext` whose per-request session
    holds the connection only privately (`session._connection`); the newer `Context` class names
    it publicly (`connection`). The public spelling wins where it exists; the private one is the
    guarded fallback, checked by type, so a release that moves it fails here with a clear message
    (tests/servers/test_mcp_connection.py runs on the lowest and the highest supported `mcp`).
    """
    session = getattr(request, "session", None)
    for holder, attr in (
        (request, "connection"),
        (session, "connection"),
        (session, "_connection"),
    ):
        conn = getattr(holder, attr, None)
        if isinstance(conn, Connection):
            return conn
    from importlib.metadata import version

    raise RuntimeError(
        f"mcp {version('mcp')} exposes no per-connection state on a request context; "
        "mcpgym supports mcp 2.0 - 2.3"
    )


Feature = Literal["sampling", "elicitation"]
_R = TypeVar("_R", bound=BaseModel)
_CAPABILITY: dict[Feature, types.ClientCapabilities] = {
    "sampling": types.ClientCapabilities(sampling=types.SamplingCapability()),
    "elicitation": types.ClientCapabilities(elicitation=types.ElicitationCapability()),
}


class InputRequired(ToolError):
    """Control flow, not a failure: a 2026-07-28 call needs the client's answer to `request`.

    The MCP layer answers the call with `input_required_result()`.
    """

    def __init__(self, key: str, request: Any, state: str) -> None:
        super().__init__(f"input required: {key}")
        self.key, self.request, self.state = key, request, state

    def result(self) -> types.InputRequiredResult:
        return types.InputRequiredResult(
            input_requests={self.key: self.request}, request_state=self.state
        )


class CapabilityMissing(ToolError):
    """The tool needs a capability the client did not declare.

    On 2026-07-28 this is the protocol error -32021 (`as_mcp_error`); on 2025-11-25 an `isError`
    result the model can read.
    """

    feature: Feature

    def __init__(self, feature: Feature) -> None:
        super().__init__(
            f"this tool needs {feature}, and the MCP client did not declare that capability",
            feature=feature,
        )
        self.feature = feature

    def as_mcp_error(self) -> MCPError:
        data = types.MissingRequiredClientCapabilityErrorData(
            required_capabilities=_CAPABILITY[self.feature]
        )
        return MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=self.message,
            data=data.model_dump(mode="json", by_alias=True, exclude_none=True),
        )


class SessionToolContext(ToolContext):
    """The context handed to tools on MCP transports (see the module docstring)."""

    transport = "mcp"

    def __init__(
        self,
        request: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams | None = None,
    ) -> None:
        super().__init__()
        self._request = request
        self._modern = request.protocol_version in MODERN_PROTOCOL_VERSIONS
        self._answers = _answers(params) if self._modern else {}
        self._asked = 0

    def supports(self, feature: Feature) -> bool:
        return self._request.session.check_client_capability(_CAPABILITY[feature])

    async def log(
        self, message: Any, level: LogLevel = "info", *, logger: str | None = None
    ) -> None:
        await super().log(message, level, logger=logger)
        request = self._request
        threshold: LogLevel = mcp_connection(request).state.get(LOG_LEVEL_KEY, "debug")
        allowed = allowed_log_levels(request.protocol_version, request.meta)
        if level not in allowed or LOG_LEVELS.index(level) < LOG_LEVELS.index(threshold):
            return
        params = types.LoggingMessageNotificationParams(level=level, data=message, logger=logger)
        note = types.LoggingMessageNotification(params=params)
        await request.session.send_notification(note, related_request_id=request.request_id)

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await super().progress(progress, total, message)
        await self._request.session.report_progress(progress, total, message)

    async def sample(
        self,
        prompt: str,
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        key: str | None = None,
    ) -> str:
        text = types.TextContent(type="text", text=prompt)
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=text)],
                max_tokens=max_tokens,
                system_prompt=system_prompt,
            )
        )
        result = await self._ask("sampling", key, request, types.CreateMessageResult)
        content = result.content
        if isinstance(content, types.TextContent):
            return content.text
        return json.dumps(content.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def elicit(
        self, message: str, schema: Mapping[str, Any] | type[BaseModel], *, key: str | None = None
    ) -> Elicitation:
        params = types.ElicitRequestFormParams(
            message=message, requested_schema=elicitation_schema(schema)
        )
        result = await self._ask(
            "elicitation", key, types.ElicitRequest(params=params), types.ElicitResult
        )
        content = dict(result.content) if result.content is not None else None
        return Elicitation(action=result.action, content=content)

    async def _ask(
        self, feature: Feature, key: str | None, request: Any, result_type: type[_R]
    ) -> _R:
        if not self.supports(feature):
            raise CapabilityMissing(feature)
        if self._modern:
            return self._replay(feature, key, request, result_type)
        session = self._request.session
        if not session.can_send_request:
            raise ToolExecutionError(
                f"this tool needs {feature}, which needs a channel for server-to-client requests; "
                "this connection has none (JSON responses, or the WebSocket mcp frame)",
                feature=feature,
            )
        metadata = ServerMessageMetadata(related_request_id=self._request.request_id)
        try:
            return await session.send_request(request, result_type, metadata=metadata)
        except NoBackChannelError:
            raise ToolExecutionError(
                f"this tool needs {feature}; this connection cannot send requests to the client",
                feature=feature,
            ) from None
        except MCPError as err:
            raise ToolExecutionError(
                f"the client refused the {feature} request: {err}", feature=feature, code=err.code
            ) from None

    def _replay(self, feature: Feature, key: str | None, request: Any, result_type: type[_R]) -> _R:
        """2026-07-28: the answer if the client gave one, else ask for it (`InputRequired`)."""
        self._asked += 1
        name = key or f"{feature}-{self._asked}"
        answer = self._answers.get(name)
        if answer is not None:
            try:
                return result_type.model_validate(answer, by_name=False)
            except ValidationError:
                pass  # not an answer to this question: ask again
        state = json.dumps({"answers": self._answers}, separators=(",", ":"))
        raise InputRequired(name, request, state)


def _answers(params: types.CallToolRequestParams | None) -> dict[str, Any]:
    """Answers from earlier rounds (the request state, already verified and unsealed by the
    `RequestStateBoundary` middleware) plus this round's `inputResponses`."""
    answers: dict[str, Any] = {}
    if params is None:
        return answers
    if params.request_state:
        try:
            earlier = json.loads(params.request_state).get("answers", {})
        except (ValueError, AttributeError):
            earlier = {}
        if isinstance(earlier, dict):
            answers.update(earlier)
    for name, response in (params.input_responses or {}).items():
        answers[name] = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    return answers
