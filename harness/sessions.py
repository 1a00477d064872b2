"""Where episodes run: an environment in this process, or a server at a URL.

An `EnvTarget` opens one `EnvSession` per episode — a fresh environment instance from a factory
(`InProcess`), or a fresh WebSocket session on a server (`Remote`, each connection being its own
instance). A session resets, steps, lists tools and closes; both kinds return the same
`StepResult[Observation]`, so the episode loop does not care where the environment lives.

Listing tools is not a step: in process it reads the environment's tool specs; at a URL it sends
an MCP `tools/list` inside the WebSocket session, falling back to a `list_tools` step only for
servers without MCP frames.

Example:
    >>> from mcpgym.examples.guess import GuessEnv
    >>> target = as_target(GuessEnv)
    >>> type(target).__name__, type(as_target("http://127.0.0.1:8000")).__name__
    ('InProcess', 'Remote')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from mcpgym.client import EnvClient
from mcpgym.env import Environment
from mcpgym.errors import RemoteError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.types import Action, Observation, StepResult, ToolInfo

__all__ = ["EnvSession", "EnvTarget", "InProcess", "Remote", "as_target"]

EnvFactory = Callable[[], Environment[Any, Any, Any]]


class EnvSession(Protocol):
    """One episode's environment."""

    async def reset(self, options: Mapping[str, Any]) -> StepResult[Observation]:
        """Start the episode; `options` are the reset keyword options (`seed`, `episode_id`, …)."""
        ...

    async def tools(self) -> list[ToolInfo]:
        """The tools an agent may call (not counted as a step)."""
        ...

    async def step(
        self, action: Action | Mapping[str, Any], timeout_s: float | None
    ) -> StepResult[Observation]:
        """Apply one action (a model or its wire dict)."""
        ...

    async def close(self) -> None:
        """Release the instance or the connection. Never raises."""
        ...


class EnvTarget(Protocol):
    """Makes one `EnvSession` per episode. `describe()` names it in reports."""

    async def open(self) -> EnvSession: ...

    def describe(self) -> str: ...


# -- in process ------------------------------------------------------------------------------------


class InProcess:
    """Episodes on fresh instances from `factory` (an `Environment` class or a zero-argument
    callable), driven through `areset` / `astep` on this event loop. `name` labels reports."""

    def __init__(
        self, factory: EnvFactory | type[Environment[Any, Any, Any]], *, name: str | None = None
    ) -> None:
        self.factory = factory
        self.name = name

    async def open(self) -> EnvSession:
        env: Any = self.factory()
        if not isinstance(env, Environment):
            raise TypeError(
                f"environment factory returned {type(env).__name__}, not an Environment"
            )
        return _LocalSession(env)

    def describe(self) -> str:
        if self.name:
            return self.name
        f = self.factory
        return f"{getattr(f, '__module__', '?')}:{getattr(f, '__qualname__', repr(f))}"


class _LocalSession:
    def __init__(self, env: Environment[Any, Any, Any]) -> None:
        self.env = env

    async def reset(self, options: Mapping[str, Any]) -> StepResult[Observation]:
        return _result(await self.env.areset(**options))

    async def tools(self) -> list[ToolInfo]:
        env = self.env
        return [s.info for s in env.visible_tools()] if isinstance(env, MCPEnvironment) else []

    async def step(
        self, action: Action | Mapping[str, Any], timeout_s: float | None
    ) -> StepResult[Observation]:
        parsed = action if isinstance(action, Action) else self.env.parse_action(dict(action))
        return _result(await self.env.astep(parsed, timeout_s=timeout_s))

    async def close(self) -> None:
        try:
            await self.env.aclose()
        except Exception:  # closing must not turn a finished episode into a failure
            return


def _result(obs: Observation) -> StepResult[Observation]:
    return StepResult(observation=obs, reward=obs.reward, done=obs.done)


# -- at a URL --------------------------------------------------------------------------------------


class Remote:
    """Episodes on a server's WebSocket sessions (`http://host:port`, one connection each).

    Args:
        url: the server's base URL.
        timeout: seconds to wait for the connection and each reply (the client's `timeout`).
        headers: extra handshake headers, e.g. `{"Authorization": "Bearer …"}`.
    """

    def __init__(
        self, url: str, *, timeout: float | None = 60.0, headers: Mapping[str, str] | None = None
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.headers = dict(headers) if headers else None

    async def open(self) -> EnvSession:
        client: EnvClient[Action, Observation, Any] = EnvClient(
            self.url, timeout=self.timeout, headers=self.headers
        )
        await client.connect()
        return _RemoteSession(client)

    def describe(self) -> str:
        return self.url


class _RemoteSession:
    def __init__(self, client: EnvClient[Action, Observation, Any]) -> None:
        self.client = client

    async def reset(self, options: Mapping[str, Any]) -> StepResult[Observation]:
        return await self.client.reset(**options)

    async def tools(self) -> list[ToolInfo]:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        try:
            reply = await self.client.mcp(request)
        except RemoteError as err:
            if err.remote_code != "UNKNOWN_TYPE":
                raise
            return await self.client.list_tools()  # an older server: costs one step
        tools = reply.get("result", {}).get("tools", [])
        return [_tool_info(t) for t in tools if isinstance(t, dict)]

    async def step(
        self, action: Action | Mapping[str, Any], timeout_s: float | None
    ) -> StepResult[Observation]:
        return await self.client.step(action, timeout_s=timeout_s)

    async def close(self) -> None:
        try:
            await self.client.close()
        except Exception:
            return


def _tool_info(tool: dict[str, Any]) -> ToolInfo:
    """An MCP tool (spec field names) as a `ToolInfo` (OpenEnv field names)."""
    return ToolInfo(
        name=str(tool.get("name", "")),
        description=str(tool.get("description") or ""),
        input_schema=tool.get("inputSchema") or {"type": "object"},
        output_schema=tool.get("outputSchema"),
        annotations=tool.get("annotations"),
    )


def as_target(env: EnvTarget | EnvFactory | type[Environment[Any, Any, Any]] | str) -> EnvTarget:
    """An `EnvTarget` from a target, a URL (`http(s)://`, `ws(s)://`) or a class / factory."""
    if isinstance(env, str):
        if not env.startswith(("http://", "https://", "ws://", "wss://")):
            raise ValueError(f"expected a URL (http://host:port), got {env!r}")
        return Remote(env)
    if hasattr(env, "open") and hasattr(env, "describe"):
        return env  # type: ignore[return-value]
    if callable(env):
        return InProcess(env)
    raise TypeError(f"cannot run episodes on {env!r}")
