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

from mcpgym.checker import check_env
from mcpgym.client import EnvClient, GenericEnvClient, SyncEnvClient, SyncGenericEnvClient
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

__version__ = "0.1.0"

__all__ = [
    "Action",
    "CallToolAction",
    "CallToolObservation",
    "ClientError",
    "EnvClient",
    "Environment",
    "EnvironmentMetadata",
    "GenericEnvClient",
    "ListToolsAction",
    "ListToolsObservation",
    "MCPEnvironment",
    "MCPGymError",
    "Mode",
    "Observation",
    "RemoteError",
    "RequestTimeout",
    "ServerGone",
    "State",
    "StepResult",
    "SyncEnvClient",
    "SyncGenericEnvClient",
    "ToolError",
    "ToolErrorInfo",
    "ToolInfo",
    "ToolSpec",
    "__version__",
    "check_env",
    "tool",
]
