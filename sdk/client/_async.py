"""`EnvClient`: drive one environment session over the server's WebSocket, with asyncio.

Example:
    >>> async def play(url: str) -> None:  # doctest: +SKIP
    ...     async with EnvClient(url) as env:
    ...         first = await env.reset(seed=1)
    ...         obs = await env.call_tool("guess", n=50)
    ...         print(obs.result, obs.reward, obs.done)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Generic, Self, cast

import httpx
from typing_extensions import TypeVar
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from mcpgym.client import _providers
from mcpgym.client._core import (
    DEFAULT_MAX_SIZE,
    DEFAULT_TIMEOUT,
    ActT,
    ClientCore,
    Frame,
    ObsT,
    PlainFrames,
    Request,
    StateT,
)
from mcpgym.client._sync import SyncEnvClient
from mcpgym.client._tasks import AsyncTasks
from mcpgym.client._url import probe_path, told
from mcpgym.env import Environment
from mcpgym.providers.base import Provider
from mcpgym.types import (
    Action,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    Observation,
    State,
    StepResult,
    ToolInfo,
)

__all__ = ["EnvClient"]

_O = TypeVar("_O", bound=Observation)
_S = TypeVar("_S", bound=State)


class AsyncTransport:
    """One WebSocket connection: sends a request frame, waits for its reply, maps failures.

    Requests are serialised with a lock (the protocol is one frame in, one out); a reply whose id
    is not the pending request's is dropped by the core.
    """

    def __init__(
        self, core: ClientCore[Any, Any], *, headers: Mapping[str, str] | None, max_size: int | None
    ) -> None:
        self.core = core
        self.headers = dict(headers) if headers else None
        self.max_size = max_size
        self._ws: ClientConnection | None = None
        self._lock = asyncio.Lock()

    async def connect(self) -> None:
        """Open a new connection (a new server session), dropping any previous one."""
        async with self._lock:
            await self._connect()

    async def _connect(self) -> None:
        core = self.core
        if self._ws is not None:
            old, self._ws = self._ws, None
            with contextlib.suppress(ConnectionClosed, OSError):
                await old.close()
        try:
            self._ws = await connect(
                core.url,
                additional_headers=self.headers,
                max_size=self.max_size,
                open_timeout=core.timeout,
                compression=None,  # local frames are small; deflate costs CPU on both ends
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            probe = await _probe(core.probe_urls, status)
            raise core.handshake_rejected(status, exc, probe) from exc
        except TimeoutError:
            raise core.connect_timed_out() from None
        except (OSError, InvalidHandshake) as exc:
            raise core.gone("cannot connect to {url}", exc) from exc
        core.mark_open()

    async def request(self, request: Request) -> Frame:
        """Send `request` and return its reply frame (connecting first on a fresh client)."""
        core = self.core
        async with self._lock:
            if core.needs_connect():
                await self._connect()
            ws = self._ws
            assert ws is not None
            try:
                async with asyncio.timeout(request.timeout):
                    await ws.send(request.text)
                    while True:
                        try:
                            frame = core.receive(request, await ws.recv())
                        except PlainFrames as again:  # a server that refuses our extensions
                            request = again.request
                            await ws.send(request.text)
                            continue
                        if frame is not None:
                            return frame
            except TimeoutError:
                raise core.timed_out(request) from None
            except ConnectionClosed as exc:
                frame = await self._leftover(ws, request)
                if frame is None:
                    raise core.gone("the server at {url} closed the connection", exc) from exc
                return frame
            except OSError as exc:
                raise core.gone("lost the connection to {url}", exc) from exc

    async def _leftover(self, ws: ClientConnection, request: Request) -> Frame | None:
        """A reply the server sent just before closing (`CAPACITY_REACHED`) is still delivered."""
        with contextlib.suppress(ConnectionClosed):
            while True:
                frame = self.core.receive(request, await ws.recv())
                if frame is not None:
                    return frame
        return None

    async def close(self) -> None:
        """Send `close`, then close the socket. Idempotent; never raises for a dead connection.

        It does not wait for a request in flight: closing is how a caller abandons one.
        """
        ws, self._ws = self._ws, None
        was_open = self.core.is_open
        self.core.mark_closed()
        if ws is None:
            return
        with contextlib.suppress(ConnectionClosed, OSError):
            if was_open:
                await ws.send(self.core.close().text)
            await ws.close()


class EnvClient(AsyncTasks, Generic[ActT, ObsT, StateT]):
    """Async client of one environment session on an mcpgym (or OpenEnv) server.

    Each connection is its own session with its own environment instance. The client connects on
    first use (or with `connect()` / `async with`); after the connection is lost, calls raise
    `ServerGone` until `connect()` starts a new session.

    Args:
        base_url: `http://host:port` (or `https`, `ws`, `wss`, with or without `/ws`).
        action_type: the environment's action model; dict actions are validated into it first.
        observation_type: the model observations are parsed into. The base `Observation` also
            recognises tool observations (`ListToolsObservation`, `CallToolObservation`).
        state_type: the model `state()` is parsed into.
        timeout: seconds to wait for the connection and for each reply (`None`: forever).
        headers: extra HTTP headers for the WebSocket handshake (e.g. `Authorization`).
        max_size: the largest frame accepted from the server, in bytes.

    Raises (from every call): `RemoteError` (the server answered with an error frame),
    `RequestTimeout`, `ServerGone`.

    Example:
        >>> async def main() -> None:  # doctest: +SKIP
        ...     async with EnvClient.for_env(GuessEnv, "http://127.0.0.1:8000") as env:
        ...         await env.reset(seed=7)
        ...         print([t.name for t in await env.list_tools()])
        ...         obs = await env.call_tool("guess", n=50)
        ...         state = await env.state()
    """

    def __init__(
        self,
        base_url: str,
        *,
        action_type: type[ActT] | None = None,
        observation_type: type[ObsT] = Observation,
        state_type: type[StateT] = State,
        timeout: float | None = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        max_size: int | None = DEFAULT_MAX_SIZE,
    ) -> None:
        self._action_type = action_type
        self._core = ClientCore(
            base_url,
            observation_type=observation_type,
            state_type=state_type,
            action_type=action_type,
            timeout=timeout,
        )
        self._transport = AsyncTransport(self._core, headers=headers, max_size=max_size)

    @classmethod
    def for_env(
        cls,
        env_cls: type[Environment[Any, _O, _S]],
        base_url: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        max_size: int | None = DEFAULT_MAX_SIZE,
    ) -> EnvClient[Action, _O, _S]:
        """A client typed with `env_cls`'s `observation_type` and `state_type`.

        The action type is not taken over: tool environments accept either tool action, which
        one class attribute cannot express.

        Example:
            >>> from mcpgym.examples.guess import GuessEnv
            >>> type(EnvClient.for_env(GuessEnv, "http://127.0.0.1:8000")).__name__
            'EnvClient'
        """
        return EnvClient(
            base_url,
            observation_type=cast(type[_O], env_cls.observation_type),
            state_type=cast(type[_S], env_cls.state_type),
            timeout=timeout,
            headers=headers,
            max_size=max_size,
        )

    @classmethod
    async def from_provider(cls, provider: Provider, /, **kwargs: Any) -> Self:
        """Start a server with `provider`, wait until healthy, connect; `close()` stops it.

        `kwargs` go to the constructor (`observation_type`, `timeout`, ...).
        """
        return await _providers.async_client_from_provider(lambda url: cls(url, **kwargs), provider)

    @classmethod
    async def from_docker_image(
        cls, image: str, /, *, provider_options: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Self:
        """Run `image` in a hardened container (`DockerProvider(image, **provider_options)`),
        connect to it; `close()` removes the container. Needs `mcpgym[docker]`."""
        provider = _providers.docker_provider(image, provider_options)
        return await _providers.async_client_from_provider(
            lambda url: cls(url, **kwargs), provider, close_provider=True
        )

    @property
    def url(self) -> str:
        """The WebSocket URL this client connects to."""
        return self._core.url

    def sync(self) -> SyncEnvClient[ActT, ObsT, StateT]:
        """A new, unconnected `SyncEnvClient` with this client's configuration."""
        t = self._transport
        return SyncEnvClient(
            self._core.base_url,
            action_type=self._action_type,
            observation_type=self._core.observation_type,
            state_type=self._core.state_type,
            timeout=self._core.timeout,
            headers=t.headers,
            max_size=t.max_size,
        )

    async def connect(self) -> Self:
        """Open the connection now (a new session; a previous one is dropped). Returns `self`."""
        await self._transport.connect()
        return self

    async def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> StepResult[ObsT]:
        """Start an episode; extra keyword arguments go to the environment's `reset`."""
        frame = await self._transport.request(self._core.reset(seed, episode_id, **kwargs))
        return self._core.parse_step(frame)

    async def step(
        self, action: ActT | Mapping[str, Any], timeout_s: float | None = None
    ) -> StepResult[ObsT]:
        """Apply one action; `timeout_s` asks the server to bound the step (and waits that long)."""
        frame = await self._transport.request(self._core.step(action, timeout_s))
        return self._core.parse_step(frame)

    async def state(self) -> StateT:
        """The episode's state (`episode_id`, `step_count`, …); not a step."""
        return self._core.parse_state(await self._transport.request(self._core.state()))

    async def list_tools(self) -> list[ToolInfo]:
        """The tools the environment offers. Sent as a `list_tools` step, so it counts as one."""
        frame = await self._transport.request(self._core.step(ListToolsAction()))
        return self._core.parse_list_tools(frame)

    async def call_tool(
        self,
        name: str,
        /,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> CallToolObservation:
        """Call one tool as a step; keyword arguments are merged into `arguments`.

        The observation's `reward` and `done` are the step's. A failing tool does not raise: its
        `error` says why (`tool_not_found`, `invalid_args`, `execution_error`, `timeout`).
        """
        action = CallToolAction(tool_name=name, arguments={**(arguments or {}), **kwargs})
        frame = await self._transport.request(self._core.step(action, timeout_s))
        return self._core.parse_call_tool(frame)

    async def mcp(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Send one JSON-RPC request (`{"id": 1, "method": "tools/list"}`); return the response."""
        return self._core.parse_mcp(await self._transport.request(self._core.mcp(request)))

    async def close(self) -> None:
        """End the session: send `close`, close the socket. Safe to call more than once.

        A client made by `from_provider`/`from_docker_image` also stops its server."""
        await self._transport.close()
        await _providers.release(self)

    async def __aenter__(self) -> Self:
        return await self.connect()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def _probe(urls: list[str], status: int) -> dict[str, Any]:
    """After a refused upgrade, the JSON replies of the server's probe URLs by path, read until
    one tells what the server is (`rejected_upgrade`)."""
    found: dict[str, Any] = {}
    if status not in (401, 403, 404):
        return found
    async with httpx.AsyncClient(timeout=5.0, trust_env=False) as http:
        for url in urls:
            try:
                reply = await http.get(url)
                found[probe_path(url)] = reply.json() if reply.is_success else None
            except (httpx.HTTPError, ValueError):
                found[probe_path(url)] = None
            if told(found):
                break
    return found
    try:
        async with httpx.AsyncClient(timeout=5.0, trust_env=False) as http:
            return (await http.get(url)).json()
    except (httpx.HTTPError, ValueError):
        return None
