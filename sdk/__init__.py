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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgym.checker import check_env
    from mcpgym.client import EnvClient, GenericEnvClient, SyncEnvClient, SyncGenericEnvClient
    from mcpgym.content import Audio, EmbeddedResource, Image, Resource, Text
    from mcpgym.context import ToolContext
    from mcpgym.discovery import from_env
    from mcpgym.env import Environment, EnvironmentMetadata
    from mcpgym.errors import (
        ClientError,
        MCPGymError,
        RemoteError,
        RequestTimeout,
        ServerGone,
        ToolError,
    )
    from mcpgym.mcp_client import MCPToolClient, SyncMCPToolClient
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


# Every name is imported when first asked for: `import mcpgym` (and so every `mcpgym` command,
# `mcpgym --help` included) costs no pydantic, websockets or mcp until something needs them.
_WHERE = {
    "check_env": "checker",
    "Audio": "content",
    "EmbeddedResource": "content",
    "Image": "content",
    "Resource": "content",
    "Text": "content",
    "ToolContext": "context",
    "Environment": "env",
    "EnvironmentMetadata": "env",
    "ClientError": "errors",
    "MCPGymError": "errors",
    "RemoteError": "errors",
    "RequestTimeout": "errors",
    "ServerGone": "errors",
    "ToolError": "errors",
    "MCPEnvironment": "mcp_env",
    "Mode": "tools",
    "ToolSpec": "tools",
    "tool": "tools",
    "Action": "types",
    "CallToolAction": "types",
    "CallToolObservation": "types",
    "ListToolsAction": "types",
    "ListToolsObservation": "types",
    "Observation": "types",
    "State": "types",
    "StepResult": "types",
    "ToolErrorInfo": "types",
    "ToolInfo": "types",
    "MCPToolClient": "mcp_client",
    "SyncMCPToolClient": "mcp_client",
    "from_env": "discovery",
    "EnvClient": "client",
    "GenericEnvClient": "client",
    "SyncEnvClient": "client",
    "SyncGenericEnvClient": "client",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgym' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mcpgym.{module}"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
