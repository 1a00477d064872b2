"""Where a trainer adapter's episodes run: in this process, at a server URL, or over a pool.

A `Source` lists the tools (simulation mode) once and opens one `Session` per adapter instance; a
session resets episodes and runs tool calls, returning `Outcome`s. The three sources:

- `LocalSource`: an environment class or factory, one instance per session, called directly;
- `RemoteSource`: a server URL, one `SyncEnvClient` WebSocket session per adapter instance (a
  connection lost between episodes is reopened at the next reset: nothing of an episode is lost);
- `PoolSource`: an environment pool, one pool session per episode (so each episode is placed
  by the pool); any object whose `session(**client_options)` is a context manager yielding a
  `SyncEnvClient` works (`mcpgym.pool.SyncEnvPool` is one).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcpgym.env import Environment
from mcpgym.errors import ClientError, ServerGone
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.types import CallToolAction, CallToolObservation, Observation, ToolInfo

__all__ = [
    "LocalSource",
    "Outcome",
    "PoolSource",
    "RemoteSource",
    "Session",
    "Source",
    "source_for",
]


@dataclass(slots=True)
class Outcome:
    """One step's result as the adapter needs it."""

    result: Any = None
    error: dict[str, Any] | None = None
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])


def _outcome(obs: Observation | CallToolObservation) -> Outcome:
    error = getattr(obs, "error", None)
    return Outcome(
        result=getattr(obs, "result", None),
        error=None if error is None else error.model_dump(mode="json"),
        reward=obs.reward,
        done=obs.done,
        metadata=dict(obs.metadata),
    )


class Session(Protocol):
    """One adapter instance's episodes."""

    def reset(self, options: Mapping[str, Any]) -> Outcome: ...
    def call(self, name: str, arguments: dict[str, Any]) -> Outcome: ...
    def close(self) -> None: ...


class Source(Protocol):
    """Lists tools and opens sessions."""

    label: str

    def tools(self) -> list[ToolInfo]: ...
    def open(self) -> Session: ...


def _run(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value  # type: ignore[arg-type]


class _LocalSession:
    def __init__(self, env: MCPEnvironment) -> None:
        self.env = env

    def reset(self, options: Mapping[str, Any]) -> Outcome:
        return _outcome(_run(self.env.reset(**dict(options))))

    def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        return _outcome(self.env.step(CallToolAction(tool_name=name, arguments=arguments)))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            _run(self.env.close())


class LocalSource:
    """An environment class (or zero-argument factory) run in this process."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory
        probe = self._make()
        self.label = type(probe).__name__
        self.env_type = type(probe)
        try:
            self._tools = [spec.info for spec in probe.visible_tools()]
        finally:
            _LocalSession(probe).close()

    def _make(self) -> MCPEnvironment:
        env = self.factory()
        if not isinstance(env, MCPEnvironment):
            kind = "an Environment without tools" if isinstance(env, Environment) else repr(env)
            raise TypeError(f"the trainer adapter needs an MCPEnvironment (tools), got {kind}")
        env.serving_mode = "simulation"
        return env

    def tools(self) -> list[ToolInfo]:
        return list(self._tools)

    def open(self) -> Session:
        return _LocalSession(self._make())


class _RemoteSession:
    def __init__(self, make_client: Callable[[], Any]) -> None:
        self.make_client = make_client
        self.client: Any = None

    def reset(self, options: Mapping[str, Any]) -> Outcome:
        if self.client is None:
            self.client = self.make_client()
        try:
            result = self.client.reset(**dict(options))
        except (ServerGone, ClientError) as exc:
            if isinstance(exc, ServerGone) or "connect()" in str(exc):
                self.client.connect()  # an episode boundary: a new server session loses nothing
                result = self.client.reset(**dict(options))
            else:
                raise
        return _outcome(result.observation)

    def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        return _outcome(self.client.call_tool(name, arguments))

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close()


class RemoteSource:
    """An environment server at `url` (simulation mode), over `SyncEnvClient`."""

    def __init__(
        self,
        url: str,
        *,
        client_options: Mapping[str, Any] | None = None,
        probe_reset: Mapping[str, Any] | None = None,
    ) -> None:
        from mcpgym.client import SyncEnvClient

        self.url = url
        self.options = dict(client_options or {})
        self.label = "RemoteEnv"

        def make() -> Any:
            return SyncEnvClient(url, **self.options)

        self._make = make
        self._tools = _list_tools(make(), probe_reset)

    def tools(self) -> list[ToolInfo]:
        return list(self._tools)

    def open(self) -> Session:
        return _RemoteSession(self._make)


def _list_tools(client: Any, probe_reset: Mapping[str, Any] | None) -> list[ToolInfo]:
    """The tools of a server, from a throwaway session (listing tools needs an episode)."""
    try:
        client.reset(**dict(probe_reset or {}))
        return list(client.list_tools())
    finally:
        client.close()


class _PoolSession:
    def __init__(self, pool: Any, options: Mapping[str, Any]) -> None:
        self.pool, self.options = pool, dict(options)
        self.stack: contextlib.ExitStack | None = None
        self.client: Any = None

    def reset(self, options: Mapping[str, Any]) -> Outcome:
        self.close()  # each episode is placed anew by the pool
        self.stack = contextlib.ExitStack()
        self.client = self.stack.enter_context(_sync_session(self.pool, self.options))
        return _outcome(self.client.reset(**dict(options)).observation)

    def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        return _outcome(self.client.call_tool(name, arguments))

    def close(self) -> None:
        stack, self.stack, self.client = self.stack, None, None
        if stack is not None:
            with contextlib.suppress(Exception):
                stack.close()


def _sync_session(pool: Any, options: Mapping[str, Any]) -> contextlib.AbstractContextManager[Any]:
    cm = pool.session(**options)
    if not hasattr(cm, "__enter__"):
        if inspect.iscoroutine(cm):
            cm.close()
        raise TypeError(
            f"{type(pool).__name__}.session() is not a synchronous context manager: trainers call "
            "tools synchronously, so pass the blocking twin (mcpgym.pool.SyncEnvPool)"
        )
    return cm


class PoolSource:
    """An environment pool: `pool.session()` opens a client on one of its servers."""

    def __init__(
        self,
        pool: Any,
        *,
        client_options: Mapping[str, Any] | None = None,
        probe_reset: Mapping[str, Any] | None = None,
    ) -> None:
        self.pool = pool
        self.options = dict(client_options or {})
        self.label = "PooledEnv"
        with _sync_session(pool, self.options) as client:
            client.reset(**dict(probe_reset or {}))
            self._tools = list(client.list_tools())

    def tools(self) -> list[ToolInfo]:
        return list(self._tools)

    def open(self) -> Session:
        return _PoolSession(self.pool, self.options)


def source_for(
    target: Any,
    *,
    client_options: Mapping[str, Any] | None = None,
    probe_reset: Mapping[str, Any] | None = None,
) -> Source:
    """The source for what the user handed over: a URL, a pool, or a class / factory."""
    if isinstance(target, str):
        return RemoteSource(target, client_options=client_options, probe_reset=probe_reset)
    if callable(getattr(target, "session", None)) and not inspect.isclass(target):
        return PoolSource(target, client_options=client_options, probe_reset=probe_reset)
    if isinstance(target, Environment):
        raise TypeError(
            f"pass the environment class ({type(target).__name__}) or a factory, not an instance: "
            "the trainer runs one environment per rollout"
        )
    if inspect.isclass(target) or callable(target):
        return LocalSource(target)
    raise TypeError(
        f"expected an environment class or factory, a server URL or a pool, got {target!r}"
    )
