"""Clients that speak plain dicts, for environments whose models cannot be imported.

They send the same frames as `EnvClient` / `SyncEnvClient` but parse nothing into models: an
observation is the server's dict as sent (`reward` and `done` are on the `StepResult`), the state
is a dict, tools are dicts. Use them for quick scripts, dashboards and foreign environments.

Example:
    >>> with SyncGenericEnvClient("http://127.0.0.1:8000") as env:  # doctest: +SKIP
    ...     env.reset(seed=1)
    ...     result = env.step({"type": "call_tool", "tool_name": "guess", "arguments": {"n": 50}})
    ...     print(result.observation["result"], result.reward, result.done)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

from mcpgym.client._async import AsyncTransport
from mcpgym.client._core import DEFAULT_MAX_SIZE, DEFAULT_TIMEOUT, ClientCore
from mcpgym.client._sync import SyncTransport
from mcpgym.types import Action, StepResult

__all__ = ["GenericEnvClient", "SyncGenericEnvClient"]

JSONDict = dict[str, Any]


def _dict_result(core: ClientCore, frame: JSONDict) -> StepResult[JSONDict]:
    obs, reward, done = core.parse_step_dict(frame)
    return StepResult(observation=obs, reward=reward, done=done)


def _call_tool_action(name: str, arguments: Mapping[str, Any] | None, kwargs: JSONDict) -> JSONDict:
    return {"type": "call_tool", "tool_name": name, "arguments": {**(arguments or {}), **kwargs}}


def _tools(core: ClientCore, frame: JSONDict) -> list[JSONDict]:
    tools = core.parse_step_dict(frame)[0].get("tools", [])
    return [dict(t) for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


class GenericEnvClient:
    """Async dict client; the same calls as `EnvClient`, every result a dict.

    Args: those of `EnvClient` without the model types.

    Example:
        >>> async def main() -> None:  # doctest: +SKIP
        ...     async with GenericEnvClient("http://127.0.0.1:8000") as env:
        ...         first = await env.reset(seed=1)
        ...         result = await env.call_tool("guess", n=50)
        ...         state = await env.state()
        ...         print(result.observation["result"], result.reward, state["step_count"])
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        max_size: int | None = DEFAULT_MAX_SIZE,
    ) -> None:
        self._core: ClientCore = ClientCore(base_url, timeout=timeout)
        self._transport = AsyncTransport(self._core, headers=headers, max_size=max_size)

    @property
    def url(self) -> str:
        """The WebSocket URL this client connects to."""
        return self._core.url

    def sync(self) -> SyncGenericEnvClient:
        """A new, unconnected `SyncGenericEnvClient` with this client's configuration."""
        t = self._transport
        return SyncGenericEnvClient(
            self._core.base_url, timeout=self._core.timeout, headers=t.headers, max_size=t.max_size
        )

    async def connect(self) -> Self:
        """Open the connection now (a new session). Returns `self`."""
        await self._transport.connect()
        return self

    async def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> StepResult[JSONDict]:
        """Start an episode; extra keyword arguments go to the environment's `reset`."""
        frame = await self._transport.request(self._core.reset(seed, episode_id, **kwargs))
        return _dict_result(self._core, frame)

    async def step(
        self, action: Mapping[str, Any] | Action, timeout_s: float | None = None
    ) -> StepResult[JSONDict]:
        """Apply one action given as its wire dict (or any `Action`)."""
        frame = await self._transport.request(self._core.step(action, timeout_s))
        return _dict_result(self._core, frame)

    async def state(self) -> JSONDict:
        """The episode's state as sent by the server."""
        return self._core.parse_state_dict(await self._transport.request(self._core.state()))

    async def list_tools(self) -> list[JSONDict]:
        """The tools as dicts (`name`, `description`, `input_schema`, …); counts as a step."""
        frame = await self._transport.request(self._core.step({"type": "list_tools"}))
        return _tools(self._core, frame)

    async def call_tool(
        self,
        name: str,
        /,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> StepResult[JSONDict]:
        """Call one tool as a step; the observation dict holds `tool_name`, `result`, `error`."""
        action = _call_tool_action(name, arguments, kwargs)
        frame = await self._transport.request(self._core.step(action, timeout_s))
        return _dict_result(self._core, frame)

    async def mcp(self, request: Mapping[str, Any]) -> JSONDict:
        """Send one JSON-RPC request; return the JSON-RPC response."""
        return self._core.parse_mcp(await self._transport.request(self._core.mcp(request)))

    async def close(self) -> None:
        """End the session. Safe to call more than once."""
        await self._transport.close()

    async def __aenter__(self) -> Self:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


class SyncGenericEnvClient:
    """Blocking dict client; the twin of `GenericEnvClient`.

    Example:
        >>> with SyncGenericEnvClient("http://127.0.0.1:8000") as env:  # doctest: +SKIP
        ...     env.reset(seed=1)
        ...     tools = [t["name"] for t in env.list_tools()]
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        max_size: int | None = DEFAULT_MAX_SIZE,
    ) -> None:
        self._core: ClientCore = ClientCore(base_url, timeout=timeout)
        self._transport = SyncTransport(self._core, headers=headers, max_size=max_size)

    @property
    def url(self) -> str:
        """The WebSocket URL this client connects to."""
        return self._core.url

    def connect(self) -> Self:
        """Open the connection now (a new session). Returns `self`."""
        self._transport.connect()
        return self

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> StepResult[JSONDict]:
        """Start an episode; extra keyword arguments go to the environment's `reset`."""
        frame = self._transport.request(self._core.reset(seed, episode_id, **kwargs))
        return _dict_result(self._core, frame)

    def step(
        self, action: Mapping[str, Any] | Action, timeout_s: float | None = None
    ) -> StepResult[JSONDict]:
        """Apply one action given as its wire dict (or any `Action`)."""
        frame = self._transport.request(self._core.step(action, timeout_s))
        return _dict_result(self._core, frame)

    def state(self) -> JSONDict:
        """The episode's state as sent by the server."""
        return self._core.parse_state_dict(self._transport.request(self._core.state()))

    def list_tools(self) -> list[JSONDict]:
        """The tools as dicts; counts as a step."""
        frame = self._transport.request(self._core.step({"type": "list_tools"}))
        return _tools(self._core, frame)

    def call_tool(
        self,
        name: str,
        /,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> StepResult[JSONDict]:
        """Call one tool as a step; the observation dict holds `tool_name`, `result`, `error`."""
        action = _call_tool_action(name, arguments, kwargs)
        frame = self._transport.request(self._core.step(action, timeout_s))
        return _dict_result(self._core, frame)

    def mcp(self, request: Mapping[str, Any]) -> JSONDict:
        """Send one JSON-RPC request; return the JSON-RPC response."""
        return self._core.parse_mcp(self._transport.request(self._core.mcp(request)))

    def close(self) -> None:
        """End the session. Safe to call more than once."""
        self._transport.close()

    def __enter__(self) -> Self:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
