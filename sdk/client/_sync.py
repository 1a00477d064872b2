"""`SyncEnvClient`: the blocking twin of `EnvClient`, over `websockets.sync` (no event loop).

Example:
    >>> with SyncEnvClient("http://127.0.0.1:8000") as env:  # doctest: +SKIP
    ...     env.reset(seed=1)
    ...     obs = env.call_tool("guess", n=50)
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Generic, Self, cast

import httpx
from typing_extensions import TypeVar
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import ClientConnection, connect

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
from mcpgym.client._tasks import SyncTasks
from mcpgym.client._url import probe_path, told
from mcpgym.env import Environment
from mcpgym.providers.base import Provider, SyncProvider
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

__all__ = ["SyncEnvClient"]

# websockets 17.1 warns when connect() is not used as a context manager unless `legacy=True`,
# a flag older releases (our floor is 14) do not accept.
_LEGACY: dict[str, Any] = (
    {"legacy": True} if "legacy" in inspect.signature(connect).parameters else {}
)

_O = TypeVar("_O", bound=Observation)
_S = TypeVar("_S", bound=State)


class SyncTransport:
    """The blocking twin of `AsyncTransport`: one connection, one request at a time."""

    def __init__(
        self, core: ClientCore[Any, Any], *, headers: Mapping[str, str] | None, max_size: int | None
    ) -> None:
        self.core = core
        self.headers = dict(headers) if headers else None
        self.max_size = max_size
        self._ws: ClientConnection | None = None
        self._lock = threading.Lock()

    def connect(self) -> None:
        """Open a new connection (a new server session), dropping any previous one."""
        with self._lock:
            self._connect()

    def _connect(self) -> None:
        core = self.core
        if self._ws is not None:
            old, self._ws = self._ws, None
            with contextlib.suppress(ConnectionClosed, OSError):
                old.close()
        try:
            self._ws = connect(
                core.url,
                additional_headers=self.headers,
                max_size=self.max_size,
                open_timeout=core.timeout,
                compression=None,  # local frames are small; deflate costs CPU on both ends
                **_LEGACY,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise core.handshake_rejected(status, exc, _probe(core.probe_urls, status)) from exc
        except TimeoutError:
            raise core.connect_timed_out() from None
        except (OSError, InvalidHandshake) as exc:
            raise core.gone("cannot connect to {url}", exc) from exc
        core.mark_open()

    def request(self, request: Request) -> Frame:
        """Send `request` and return its reply frame (connecting first on a fresh client)."""
        core = self.core
        with self._lock:
            if core.needs_connect():
                self._connect()
            ws = self._ws
            assert ws is not None
            deadline = None if request.timeout is None else time.monotonic() + request.timeout
            try:
                ws.send(request.text)
                while True:
                    left = None if deadline is None else max(0.0, deadline - time.monotonic())
                    try:
                        frame = core.receive(request, ws.recv(timeout=left))
                    except PlainFrames as again:  # a server that refuses our extensions
                        request = again.request
                        ws.send(request.text)
                        continue
                    if frame is not None:
                        return frame
            except TimeoutError:
                raise core.timed_out(request) from None
            except ConnectionClosed as exc:
                frame = self._leftover(ws, request)
                if frame is None:
                    raise core.gone("the server at {url} closed the connection", exc) from exc
                return frame
            except OSError as exc:
                raise core.gone("lost the connection to {url}", exc) from exc

    def _leftover(self, ws: ClientConnection, request: Request) -> Frame | None:
        """A reply the server sent just before closing (`CAPACITY_REACHED`) is still delivered."""
        with contextlib.suppress(ConnectionClosed):
            while True:
                frame = self.core.receive(request, ws.recv())
                if frame is not None:
                    return frame
        return None

    def close(self) -> None:
        """Send `close`, then close the socket. Idempotent; never raises for a dead connection."""
        ws, self._ws = self._ws, None
        was_open = self.core.is_open
        self.core.mark_closed()
        if ws is None:
            return
        with contextlib.suppress(ConnectionClosed, OSError):
            if was_open:
                ws.send(self.core.close().text)
            ws.close()


class SyncEnvClient(SyncTasks, Generic[ActT, ObsT, StateT]):
    """Blocking client of one environment session; the same API as `EnvClient`, without `await`.

    Args and errors are those of `EnvClient`. One connection serves one call at a time; calls from
    several threads are serialised.

    Example:
        >>> with SyncEnvClient("http://127.0.0.1:8000") as env:  # doctest: +SKIP
        ...     result = env.reset(seed=7)
        ...     names = [t.name for t in env.list_tools()]
        ...     obs = env.call_tool("guess", n=50)
        ...     print(obs.result, obs.reward, obs.done, env.state().step_count)
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
        self._core = ClientCore(
            base_url,
            observation_type=observation_type,
            state_type=state_type,
            action_type=action_type,
            timeout=timeout,
        )
        self._transport = SyncTransport(self._core, headers=headers, max_size=max_size)

    @classmethod
    def for_env(
        cls,
        env_cls: type[Environment[Any, _O, _S]],
        base_url: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        max_size: int | None = DEFAULT_MAX_SIZE,
    ) -> SyncEnvClient[Action, _O, _S]:
        """A client typed with `env_cls`'s `observation_type` and `state_type` (see `EnvClient`)."""
        return SyncEnvClient(
            base_url,
            observation_type=cast(type[_O], env_cls.observation_type),
            state_type=cast(type[_S], env_cls.state_type),
            timeout=timeout,
            headers=headers,
            max_size=max_size,
        )

    @classmethod
    def from_provider(cls, provider: Provider | SyncProvider, /, **kwargs: Any) -> Self:
        """Start a server with `provider`, wait until healthy, connect; `close()` stops it.

        An async `Provider` is driven through its `sync()` twin and closed with the client;
        pass a `SyncProvider` to keep using it afterwards.
        """
        return _providers.sync_client_from_provider(lambda url: cls(url, **kwargs), provider)

    @classmethod
    def from_docker_image(
        cls, image: str, /, *, provider_options: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Self:
        """Run `image` in a hardened container (`DockerProvider(image, **provider_options)`),
        connect to it; `close()` removes the container. Needs `mcpgym[docker]`."""
        provider = _providers.docker_provider(image, provider_options)
        return _providers.sync_client_from_provider(
            lambda url: cls(url, **kwargs), provider, close_provider=True
        )

    @property
    def url(self) -> str:
        """The WebSocket URL this client connects to."""
        return self._core.url

    def connect(self) -> Self:
        """Open the connection now (a new session; a previous one is dropped). Returns `self`."""
        self._transport.connect()
        return self

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> StepResult[ObsT]:
        """Start an episode; extra keyword arguments go to the environment's `reset`."""
        frame = self._transport.request(self._core.reset(seed, episode_id, **kwargs))
        return self._core.parse_step(frame)

    def step(
        self, action: ActT | Mapping[str, Any], timeout_s: float | None = None
    ) -> StepResult[ObsT]:
        """Apply one action; `timeout_s` asks the server to bound the step (and waits that long)."""
        return self._core.parse_step(self._transport.request(self._core.step(action, timeout_s)))

    def state(self) -> StateT:
        """The episode's state (`episode_id`, `step_count`, …); not a step."""
        return self._core.parse_state(self._transport.request(self._core.state()))

    def list_tools(self) -> list[ToolInfo]:
        """The tools the environment offers. Sent as a `list_tools` step, so it counts as one."""
        frame = self._transport.request(self._core.step(ListToolsAction()))
        return self._core.parse_list_tools(frame)

    def call_tool(
        self,
        name: str,
        /,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> CallToolObservation:
        """Call one tool as a step (see `EnvClient.call_tool`)."""
        action = CallToolAction(tool_name=name, arguments={**(arguments or {}), **kwargs})
        frame = self._transport.request(self._core.step(action, timeout_s))
        return self._core.parse_call_tool(frame)

    def mcp(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Send one JSON-RPC request; return the JSON-RPC response."""
        return self._core.parse_mcp(self._transport.request(self._core.mcp(request)))

    def close(self) -> None:
        """End the session: send `close`, close the socket. Safe to call more than once.

        A client made by `from_provider`/`from_docker_image` also stops its server."""
        self._transport.close()
        _providers.release_sync(self)

    def __enter__(self) -> Self:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _probe(urls: list[str], status: int) -> dict[str, Any]:
    """After a refused upgrade, the JSON replies of the server's probe URLs by path, read until
    one tells what the server is (`rejected_upgrade`)."""
    found: dict[str, Any] = {}
    if status not in (401, 403, 404):
        return found
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        for url in urls:
            try:
                reply = http.get(url)
                found[probe_path(url)] = reply.json() if reply.is_success else None
            except (httpx.HTTPError, ValueError):
                found[probe_path(url)] = None
            if told(found):
                break
    return found
