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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from mcpgym.client import EnvClient, SyncEnvClient
from mcpgym.env import Environment
from mcpgym.manifest import Manifest, ManifestError, find_manifest, load_manifest

__all__ = [
    "EnvironmentInfo",
    "ServedEnvClient",
    "SyncServedEnvClient",
    "afrom_env",
    "environment_entry",
    "from_env",
    "list_environments",
]

GROUP = "mcpgym.environments"


@dataclass(frozen=True)
class EnvironmentInfo:
    """One installed environment: its name, entry point and manifest (if it has a valid one)."""

    name: str
    entry_point: str
    manifest: Manifest | None = None
    manifest_problem: str | None = None

    @property
    def version(self) -> str:
        return self.manifest.version if self.manifest else "?"

    @property
    def description(self) -> str:
        return self.manifest.description if self.manifest else ""


def environment_entry(name: str) -> str | None:
    """`MODULE:ATTR` of the installed environment `name`, or `None`."""
    for ep in entry_points(group=GROUP):
        if ep.name == name:
            return ep.value
    return None


def _manifest_of(target: str) -> tuple[Manifest | None, str | None]:
    import importlib
    from pathlib import Path

    try:
        module = importlib.import_module(target.partition(":")[0])
    except Exception as exc:
        return None, f"cannot import: {exc}"
    here = Path(module.__file__ or ".").parent
    own = here / f"{Path(module.__file__ or 'x').stem}.mcpgym.yaml"
    path = own if own.is_file() else find_manifest(here)
    if path is None:
        return None, "no manifest"
    try:
        return load_manifest(path), None
    except ManifestError as exc:
        return None, str(exc)


def list_environments() -> list[EnvironmentInfo]:
    """Every environment installed packages register, by name."""
    out = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        manifest, problem = _manifest_of(ep.value)
        out.append(EnvironmentInfo(ep.name, ep.value, manifest, problem))
    return out


def _resolve(name: str) -> str:
    if ":" in name:
        return name
    found = environment_entry(name)
    if found is None:
        known = ", ".join(e.name for e in entry_points(group=GROUP)) or "none"
        raise ValueError(f"no installed environment {name!r} (installed: {known})")
    return found


class SyncServedEnvClient(SyncEnvClient[Any, Any, Any]):
    """A `SyncEnvClient` that owns the server it connects to: `close()` stops it too."""

    _stopper: Any = None

    def close(self) -> None:
        try:
            super().close()
        finally:
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
    from mcpgym.validate.serve import LocalServer

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
    target = _resolve(name)
    if in_process:
        from mcpgym.validate.context import import_target

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
    return client


async def afrom_env(
    name: str,
    *,
    mode: str = "simulation",
    provider: Any = None,
    startup_s: float = 60.0,
    timeout: float | None = 60.0,  # noqa: ASYNC109 - the client's reply timeout, not ours
) -> ServedEnvClient:
    """`from_env` for asyncio: an `EnvClient` connected to a fresh server it owns."""
    target = _resolve(name)
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
