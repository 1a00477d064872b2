"""The events of a harness turn: what the harness did, as a discriminated union on `type`.

`tool_call`, `tool_result` and `text` come from the harness's own output; `llm_request` and
`llm_response` from the capture proxy (`llm_event`); `error` for trouble that did not end the turn;
every turn ends with one `turn_complete`.

Example:
    >>> event_adapter.validate_python({"type": "text", "text": "hi"})
    TextEvent(type='text', text='hi')
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "ErrorEvent",
    "HarnessEvent",
    "LlmRequestEvent",
    "LlmResponseEvent",
    "TextEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnComplete",
    "event_adapter",
    "llm_event",
]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCallEvent(_Event):
    """The harness called a tool (`name` as the harness spells it)."""

    type: Literal["tool_call"] = "tool_call"
    id: str = ""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResultEvent(_Event):
    """A tool result came back to the harness."""

    type: Literal["tool_result"] = "tool_result"
    id: str = ""
    name: str = ""
    content: Any = None
    is_error: bool = False


class TextEvent(_Event):
    """Text the model produced (a message to the user)."""

    type: Literal["text"] = "text"
    text: str


class LlmRequestEvent(_Event):
    """The harness called its model (seen by the capture proxy)."""

    type: Literal["llm_request"] = "llm_request"
    index: int
    dialect: str
    model: str = ""
    stream: bool = False


class LlmResponseEvent(_Event):
    """A model call finished (`status`, token `usage`, `error` body when it failed)."""

    type: Literal["llm_response"] = "llm_response"
    index: int
    status: int = 0
    usage: dict[str, int] | None = None
    duration_s: float | None = None
    error: dict[str, Any] | None = None


class ErrorEvent(_Event):
    """Something went wrong inside the harness that did not end the turn (an API retry, …)."""

    type: Literal["error"] = "error"
    message: str


class TurnComplete(_Event):
    """The turn ended: `response` is the final answer; `done` when the harness ended the task."""

    type: Literal["turn_complete"] = "turn_complete"
    response: str = ""
    done: bool | None = None
    session_id: str | None = None


HarnessEvent = Annotated[
    ToolCallEvent
    | ToolResultEvent
    | TextEvent
    | LlmRequestEvent
    | LlmResponseEvent
    | ErrorEvent
    | TurnComplete,
    Field(discriminator="type"),
]
"""One event of a turn (a discriminated union on `type`)."""

event_adapter: TypeAdapter[HarnessEvent] = TypeAdapter(HarnessEvent)


def llm_event(phase: str, call: Any) -> LlmRequestEvent | LlmResponseEvent:
    """The event for a capture-proxy call (`LLMCall`) starting (`"request"`) or ending."""
    if phase == "request":
        return LlmRequestEvent(
            index=call.index, dialect=call.dialect, model=call.model, stream=call.stream
        )
    usage = call.usage.model_dump() if call.usage is not None else None
    return LlmResponseEvent(
        index=call.index,
        status=call.status,
        usage=usage,
        duration_s=call.duration_s,
        error=call.error,
    )
