"""mcpgym: author, serve and evaluate tool-using environments for agents.

Author an environment as an `MCPEnvironment` subclass with `@tool` methods; serve it with
`mcpgym serve MODULE:CLASS` (simulation for training, real MCP for production); drive it with
`EnvClient` (async) or its sync twin.

Example:
    >>> from mcpgym import MCPEnvironment, tool
    >>> class Hello(MCPEnvironment):
    ...     @tool
    ...     def greet(self, name: str) -> str:
    ...         '''Say hello.'''
    ...         return f"hello {name}"
    >>> sorted(Hello.tool_specs)
    ['greet']
"""

from typing import TYPE_CHECKING, Any

from mcpgym.checker import check_env
from mcpgym.content import Audio, EmbeddedResource, Image, Resource, Text
from mcpgym.context import ToolContext
from mcpgym.env import Environment, EnvironmentMetadata
from mcpgym.errors import (
    ClientError,
    MCPGymError,
    RemoteError,
    RequestTimeout,
    ServerGone,
    ToolError,
)
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.tools import Mode, ToolSpec, tool
from mcpgym.types import (
    Action,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
    StepResult,
    ToolErrorInfo,
    ToolInfo,
)

if TYPE_CHECKING:
    from mcpgym.client import EnvClient, GenericEnvClient, SyncEnvClient, SyncGenericEnvClient
    from mcpgym.discovery import from_env
    from mcpgym.mcp_client import MCPToolClient, SyncMCPToolClient

__version__ = "0.1.0"

__all__ = [
    "Action",
    "Audio",
    "CallToolAction",
    "CallToolObservation",
    "ClientError",
    "EmbeddedResource",
    "EnvClient",
    "Environment",
    "EnvironmentMetadata",
    "GenericEnvClient",
    "Image",
    "ListToolsAction",
    "ListToolsObservation",
    "MCPEnvironment",
    "MCPGymError",
    "MCPToolClient",
    "Mode",
    "Observation",
    "RemoteError",
    "RequestTimeout",
    "Resource",
    "ServerGone",
    "State",
    "StepResult",
    "SyncEnvClient",
    "SyncGenericEnvClient",
    "SyncMCPToolClient",
    "Text",
    "ToolContext",
    "ToolError",
    "ToolErrorInfo",
    "ToolInfo",
    "ToolSpec",
    "__version__",
    "check_env",
    "from_env",
    "tool",
]


_CLIENTS = frozenset({"EnvClient", "GenericEnvClient", "SyncEnvClient", "SyncGenericEnvClient"})


def __getattr__(name: str) -> Any:
    # The MCP tool client imports the `mcp` package (over a second), the WS client `websockets`'
    # client side: servers need neither, so they are imported when first asked for.
    if name in ("MCPToolClient", "SyncMCPToolClient"):
        from mcpgym import mcp_client

        return getattr(mcp_client, name)
    if name == "from_env":  # starts servers: loads the client and the validator's launcher
        from mcpgym.discovery import from_env

        return from_env
    if name in _CLIENTS:
        from mcpgym import client

        return getattr(client, name)
    raise AttributeError(f"module 'mcpgym' has no attribute {name!r}")
