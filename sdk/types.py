"""The data an environment exchanges with its driver: actions in, observations and state out.

Every model here is a pydantic model whose JSON form is the wire format (DESIGN.md §5), so the same
objects travel over HTTP, the WebSocket and into trajectories unchanged. Field names follow OpenEnv
0.10.0 so its clients interoperate.

Example:
    >>> from mcpgym import CallToolAction
    >>> CallToolAction(tool_name="guess", arguments={"n": 5}).model_dump()["type"]
    'call_tool'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "Action",
    "AnyObservation",
    "CallToolAction",
    "CallToolObservation",
    "ListToolsAction",
    "ListToolsObservation",
    "MCPAction",
    "Observation",
    "State",
    "StepResult",
    "ToolErrorInfo",
    "ToolErrorType",
    "ToolInfo",
    "mcp_action_adapter",
]


class Action(BaseModel):
    """Base class of everything an agent or trainer can do in one `step`.

    Unknown fields are rejected so that a typo in a client never silently becomes a no-op.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form, not interpreted."
    )


class Observation(BaseModel):
    """Base class of what the environment returns from `reset` and `step`.

    `reward` and `done` travel beside the observation on the wire (OpenEnv's envelope); subclasses
    add the fields the agent sees.
    """

    model_config = ConfigDict(extra="forbid")

    done: bool = False
    reward: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class AnyObservation(Observation):
    """An observation of any environment: every field the server sent is kept as an attribute.

    What a client parses replies into when it is given no observation model of the
    environment's own (an OpenEnv server's `echoed_message`, a bridged library's fields).

        >>> AnyObservation.model_validate({"echoed_message": "hi"}).echoed_message
        'hi'
    """

    model_config = ConfigDict(extra="allow")


ObsT = TypeVar("ObsT")


class State(BaseModel):
    """Episode bookkeeping, readable at any time through `state`.

    Subclasses may add fields; extra fields are allowed so a generic client can read any state.
    """

    model_config = ConfigDict(extra="allow")

    episode_id: str | None = None
    step_count: int = 0


@dataclass(frozen=True, slots=True)
class StepResult(Generic[ObsT]):
    """What a client receives from `reset` or `step`: the observation plus reward and done."""

    observation: ObsT
    reward: float | None = None
    done: bool = False


# -- tool use as actions -------------------------------------------------------------------------


class ListToolsAction(Action):
    """Ask the environment which tools exist (in the server's mode)."""

    type: Literal["list_tools"] = "list_tools"


class CallToolAction(Action):
    """Call one tool with JSON arguments; the result or a structured error comes back as data."""

    type: Literal["call_tool"] = "call_tool"
    tool_name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


# Titled "Action" in JSON Schema: clients that read `/schema` (verifiers 0.4.0's `openenv`
# taskset) recognise the generic MCP action by that title and then list the tools for the model.
MCPAction = Annotated[ListToolsAction | CallToolAction, Field(discriminator="type", title="Action")]
"""The action type of an `MCPEnvironment`: list or call tools."""

mcp_action_adapter: TypeAdapter[ListToolsAction | CallToolAction] = TypeAdapter(MCPAction)


class ToolInfo(BaseModel):
    """One tool as an agent sees it (OpenEnv field names; `/mcp` uses the MCP spec's names)."""

    model_config = ConfigDict(extra="allow")

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None


ToolErrorType = Literal["tool_not_found", "invalid_args", "execution_error", "timeout"]


class ToolErrorInfo(BaseModel):
    """Why a tool call failed, in a form a model can read and correct itself from."""

    model_config = ConfigDict(extra="allow")

    error_type: ToolErrorType
    message: str


class ListToolsObservation(Observation):
    """The answer to `ListToolsAction`."""

    tools: list[ToolInfo] = Field(default_factory=list)


class CallToolObservation(Observation):
    """The answer to `CallToolAction`: `result` on success, `error` (structured) on failure."""

    tool_name: str
    result: Any = None
    error: ToolErrorInfo | None = None
