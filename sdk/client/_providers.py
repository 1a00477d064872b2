"""Clients that own their server: `from_provider` and `from_docker_image` (async and sync).

The client starts one server with the provider, waits until it is healthy, connects, and on
`close()` stops the server (and, for a provider it made itself, closes the provider). The
bookkeeping lives here, keyed weakly by client, so the client classes carry only thin
classmethods and a one-line release in `close`.

Example:
    >>> async def main() -> None:  # doctest: +SKIP
    ...     env = await EnvClient.from_docker_image("mcpgym-guess:latest")
    ...     try:
    ...         await env.reset(seed=1)
    ...     finally:
    ...         await env.close()  # also removes the container
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from mcpgym.providers.base import Provider, ServerHandle, SyncProvider

__all__ = [
    "async_client_from_provider",
    "docker_provider",
    "release",
    "release_sync",
    "sync_client_from_provider",
]

_C = TypeVar("_C")


@dataclass
class _Owned:
    provider: Provider
    handle: ServerHandle
    close_provider: bool
    sync: SyncProvider | None = None
    finalizer: Any = None  # the safety net (`_unclosed`, `_unclosed_async`), detached by close


_OWNED: weakref.WeakKeyDictionary[Any, _Owned] = weakref.WeakKeyDictionary()


def docker_provider(image: str, options: Mapping[str, Any] | None) -> Provider:
    """A `DockerProvider` for `image` (imported late: the client needs no docker SDK otherwise)."""
    from mcpgym.providers.docker import DockerProvider

    return DockerProvider(image, **dict(options or {}))


async def async_client_from_provider(
    make: Callable[[str], _C], provider: Provider, *, close_provider: bool = False
) -> _C:
    """Start a server with `provider`, connect `make(base_url)` to it; `release` undoes both."""
    handle = await provider.start()
    try:
        client = make(handle.base_url)
        await client.connect()  # type: ignore[attr-defined]
    except BaseException:
        await provider.stop(handle)
        if close_provider:
            await provider.aclose()
        raise
    owned = _OWNED[client] = _Owned(provider, handle, close_provider)
    name = f"{type(client).__name__}({handle.base_url})"
    owned.finalizer = weakref.finalize(client, _unclosed_async, name)
    return client


def _unclosed_async(name: str) -> None:
    """An async client that owned a server was collected, or the interpreter is exiting, and
    nobody awaited its `close()`: no loop is left to stop the server on, so say so. The server
    still goes when this process exits: a process provider's server watches its owner, a
    container provider's reaper removes its container (`mcpgym.providers.reaper`)."""
    warnings.warn(
        f"{name} was not closed: await close() or use `async with` (nothing stops its server "
        "before this process exits)",
        ResourceWarning,
        stacklevel=2,
    )


def sync_client_from_provider(
    make: Callable[[str], _C], provider: Provider | SyncProvider, *, close_provider: bool = False
) -> _C:
    """The blocking `async_client_from_provider`; the provider runs on its own private loop."""
    # An async provider handed in here is driven by a twin we make, and closed with the client.
    owns_twin = not isinstance(provider, SyncProvider)
    sync = provider if isinstance(provider, SyncProvider) else provider.sync()
    handle = sync.start()
    try:
        client = make(handle.base_url)
        client.connect()  # type: ignore[attr-defined]
    except BaseException:
        sync.stop(handle)
        if close_provider or owns_twin:
            sync.close()
        raise
    owned = _OWNED[client] = _Owned(sync.provider, handle, close_provider or owns_twin, sync)
    name = f"{type(client).__name__}({handle.base_url})"
    owned.finalizer = weakref.finalize(client, _unclosed, owned, name)
    return client


def _unclosed(owned: _Owned, name: str) -> None:
    """A sync client that owned a server was collected, or the interpreter is exiting, and
    nobody closed it: say so (`ResourceWarning`), then stop the server it started anyway, so
    no container or process outlives the script."""
    warnings.warn(
        f"{name} was not closed: stopping the server it started (call close() or use `with`)",
        ResourceWarning,
        stacklevel=2,
    )
    _stop(owned)


async def release(client: object) -> None:
    """Stop the server `client` started (if it started one). Idempotent."""
    owned = _OWNED.pop(client, None)
    if owned is None:
        return
    if owned.finalizer is not None:
        owned.finalizer.detach()
    try:
        await owned.provider.stop(owned.handle)
    finally:
        if owned.close_provider:
            await owned.provider.aclose()


def release_sync(client: object) -> None:
    """The blocking `release`."""
    owned = _OWNED.pop(client, None)
    if owned is None:
        return
    if owned.finalizer is not None:
        owned.finalizer.detach()
    _stop(owned)


def _stop(owned: _Owned) -> None:
    sync = owned.sync or owned.provider.sync()
    try:
        sync.stop(owned.handle)
    finally:
        if owned.close_provider:
            sync.close()
