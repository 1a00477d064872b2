"""The provider contract: start an environment server somewhere, hand back its base URL.

A provider owns nothing but the servers it started. Every provider (process, docker, podman,
swarm, ray, kubernetes) has the same small surface — `start`, `wait_healthy`, `logs`, `stop` —
and labels what it creates with `LABEL_RUN` so `mcpgym providers gc` can remove what a dead run
left behind (DESIGN.md §9). Async is the core; `SyncProvider` is the blocking twin.

Example:
    >>> from mcpgym.providers.base import ServerHandle
    >>> ServerHandle(id="abc", base_url="http://127.0.0.1:8000").base_url
    'http://127.0.0.1:8000'
"""

from __future__ import annotations

import abc
import asyncio
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import httpx

__all__ = [
    "LABEL_KIND",
    "LABEL_MANAGED",
    "LABEL_OWNER_PID",
    "LABEL_RUN",
    "Provider",
    "ProviderError",
    "ServerHandle",
    "SyncProvider",
    "new_run_id",
    "wait_healthy",
]

#: Labels put on everything a provider creates (containers, services, pods, process env).
LABEL_MANAGED = "io.mcpgym.managed"
LABEL_RUN = "io.mcpgym.run"
LABEL_KIND = "io.mcpgym.kind"
LABEL_OWNER_PID = "io.mcpgym.owner-pid"


class ProviderError(RuntimeError):
    """A provider could not start, reach or stop a server (infrastructure, never the agent)."""


def new_run_id() -> str:
    """A fresh id naming one run's resources (used in labels and names)."""
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class ServerHandle:
    """One started server: its provider-specific `id` and the `base_url` clients connect to."""

    id: str
    base_url: str
    meta: Mapping[str, Any] = field(default_factory=dict)


async def wait_healthy(
    base_url: str, *, deadline_s: float = 30.0, interval_s: float = 0.05
) -> None:
    """Poll `GET {base_url}/health` until it answers 200 or `deadline_s` passes."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    last: str = "no answer"
    async with httpx.AsyncClient(timeout=2.0, trust_env=False) as http:
        while True:
            try:
                resp = await http.get(base_url.rstrip("/") + "/health")
                if resp.status_code == 200:
                    return
                last = f"HTTP {resp.status_code}"
            except httpx.HTTPError as exc:
                last = type(exc).__name__
            if loop.time() >= end:
                raise ProviderError(
                    f"{base_url} not healthy after {deadline_s:.1f}s (last: {last})"
                )
            await asyncio.sleep(interval_s)


class Provider(abc.ABC):
    """Starts environment servers; async context manager that stops all it started on exit.

    Subclasses implement `_start`, `_stop` and `_logs`; `start`/`stop` add bookkeeping so that
    `stop` is idempotent and `aclose` removes everything this provider started.
    """

    kind: str = "provider"

    def __init__(self, *, run_id: str | None = None, health_deadline_s: float = 60.0) -> None:
        self.run_id = run_id or new_run_id()
        self.health_deadline_s = health_deadline_s
        self._handles: dict[str, ServerHandle] = {}

    @property
    def labels(self) -> dict[str, str]:
        """The labels this provider puts on what it creates."""
        return {
            LABEL_MANAGED: "1",
            LABEL_RUN: self.run_id,
            LABEL_KIND: self.kind,
            LABEL_OWNER_PID: str(os.getpid()),
        }

    @property
    def handles(self) -> list[ServerHandle]:
        """The servers started and not yet stopped."""
        return list(self._handles.values())

    async def start(self, *, wait: bool = True) -> ServerHandle:
        """Start one server; with `wait`, return only once `/health` answers (or raise)."""
        handle = await self._start()
        self._handles[handle.id] = handle
        if wait:
            try:
                await self.wait_healthy(handle)
            except BaseException:
                await self.stop(handle)
                raise
        return handle

    async def wait_healthy(self, handle: ServerHandle, deadline_s: float | None = None) -> None:
        """Wait until `handle` answers `/health`, at most `deadline_s` (default the provider's)."""
        await wait_healthy(handle.base_url, deadline_s=deadline_s or self.health_deadline_s)

    async def stop(self, handle: ServerHandle | str) -> None:
        """Stop and remove one server; stopping it again (or an unknown id) is a no-op."""
        hid = handle if isinstance(handle, str) else handle.id
        known = self._handles.pop(hid, None)
        if known is not None:
            await self._stop(known)

    async def logs(self, handle: ServerHandle) -> str:
        """What the server printed so far (best effort)."""
        return await self._logs(handle)

    async def alive(self, handle: ServerHandle) -> bool | None:
        """Whether the server still runs, as the engine sees it; `None` when the provider cannot
        tell cheaply (callers then probe `/health`). Pools use it to tell a dead server from a
        failed episode."""
        return None

    async def aclose(self) -> None:
        """Stop everything this provider started."""
        for handle in list(self._handles.values()):
            await self.stop(handle)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def sync(self) -> SyncProvider:
        """The blocking twin of this provider."""
        return SyncProvider(self)

    @abc.abstractmethod
    async def _start(self) -> ServerHandle: ...

    @abc.abstractmethod
    async def _stop(self, handle: ServerHandle) -> None: ...

    async def _logs(self, handle: ServerHandle) -> str:
        return ""


class SyncProvider:
    """Blocking twin of a `Provider`: runs it on a private event loop owned by this object."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self._runner = asyncio.Runner()

    def start(self, *, wait: bool = True) -> ServerHandle:
        return self._runner.run(self.provider.start(wait=wait))

    def stop(self, handle: ServerHandle | str) -> None:
        self._runner.run(self.provider.stop(handle))

    def logs(self, handle: ServerHandle) -> str:
        return self._runner.run(self.provider.logs(handle))

    def close(self) -> None:
        try:
            self._runner.run(self.provider.aclose())
        finally:
            self._runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
