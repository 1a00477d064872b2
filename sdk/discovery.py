"""Installed environments: the `mcpgym.environments` entry points, and starting one by name.

A package registers its environment class under a short name:

    [project.entry-points."mcpgym.environments"]
    calendar = "calendar_gym:CalendarEnv"

`list_environments()` (and `mcpgym list`) shows them with their manifests; `from_env(name)`
starts one — in this process (`in_process=True`: an instance), as a local server in a child
process (default), or through a provider — and returns a client connected to it, like OpenEnv's
`AutoEnv.from_env`. Closing the client stops the server it started.

Example:
    >>> "guess" in [e.name for e in list_environments()]
    True
    >>> env = from_env("guess", in_process=True)
    >>> type(env).__name__
    'GuessEnv'
"""

from __future__ import annotations

import asyncio
import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from mcpgym.client import EnvClient, SyncEnvClient
from mcpgym.env import Environment
from mcpgym.manifest.registry import (
    EnvironmentInfo,
    environment_entry,
    import_target,
    list_environments,
    resolve_target,
)
from mcpgym.validate.serve import LocalServer

__all__ = [
    "EnvironmentInfo",
    "ServedEnvClient",
    "SyncServedEnvClient",
    "afrom_env",
    "environment_entry",
    "from_env",
    "list_environments",
]


class SyncServedEnvClient(SyncEnvClient[Any, Any, Any]):
    """A `SyncEnvClient` that owns the server it connects to: `close()` stops it too."""

    _stopper: Any = None
    _finalizer: Any = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._finalizer is not None:
                self._finalizer.detach()
            if self._stopper is not None:
                self._stopper()
                self._stopper = None


class ServedEnvClient(EnvClient[Any, Any, Any]):
    """An `EnvClient` that owns the server it connects to: `close()` stops it too."""

    _astop: Callable[[], Awaitable[None]] | None = None

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            stop, self._astop = self._astop, None
            if stop is not None:
                await stop()


def _start_local(target: str, mode: str, startup_s: float) -> tuple[str, Any]:
    srv = LocalServer(target, mode=mode, startup_s=startup_s).start()
    return srv.url, srv.stop


def from_env(
    name: str,
    *,
    mode: str = "simulation",
    in_process: bool = False,
    provider: Any = None,
    startup_s: float = 60.0,
    timeout: float | None = 60.0,
) -> Any:
    """Start the installed environment `name` (or `MODULE:ATTR`) and connect to it.

    Returns an `Environment` instance with `in_process=True`; otherwise a `SyncServedEnvClient`
    connected to a fresh local server (or to one `provider.sync().start()` made) that stops the
    server when closed. Raises `ValueError` for an unknown name.
    """
    target = resolve_target(name)
    if in_process:
        obj = import_target(target)
        env = obj()
        if not isinstance(env, Environment):
            raise ValueError(f"{target} made a {type(env).__name__}, not an Environment")
        return env
    if provider is not None:
        sync = provider.sync()
        handle = sync.start()
        url, stop = handle.base_url, sync.close
    else:
        url, stop = _start_local(target, mode, startup_s)
    client = SyncServedEnvClient(url, timeout=timeout)
    client._stopper = stop
    client._finalizer = weakref.finalize(client, _unclosed, stop, f"from_env({name!r})")
    return client


def _unclosed(stop: Callable[[], None], name: str) -> None:
    """A `from_env` client was collected, or the interpreter is exiting, and nobody closed it:
    say so (`ResourceWarning`) and stop its server anyway, so no process outlives the script."""
    warnings.warn(
        f"{name} was not closed: stopping the server it started (call close() or use `with`)",
        ResourceWarning,
        stacklevel=2,
    )
    stop()


async def afrom_env(
    name: str,
    *,
    mode: str = "simulation",
    provider: Any = None,
    startup_s: float = 60.0,
    timeout: float | None = 60.0,  # noqa: ASYNC109 - the client's reply timeout, not ours
) -> ServedEnvClient:
    """`from_env` for asyncio: an `EnvClient` connected to a fresh server it owns."""
    target = resolve_target(name)
    if provider is not None:
        handle = await provider.start()
        client = ServedEnvClient(handle.base_url, timeout=timeout)
        client._astop = provider.aclose
        return client
    url, stop = await asyncio.to_thread(_start_local, target, mode, startup_s)
    client = ServedEnvClient(url, timeout=timeout)

    async def astop() -> None:
        await asyncio.to_thread(stop)

    client._astop = astop
    return client
