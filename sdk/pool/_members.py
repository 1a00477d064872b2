"""The pool's parts: a member server, a placed session, and the infrastructure failure."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mcpgym.providers.base import ProviderError, ServerHandle

if TYPE_CHECKING:
    from mcpgym.client import EnvClient

__all__ = ["InfrastructureError", "PoolMember", "PoolSession"]


class InfrastructureError(ProviderError):
    """A pool server died (or no server was available) under a session: not the agent's fault.

    `member` is the server that failed (`None` when none could be had).
    """

    def __init__(self, message: str, member: PoolMember | None = None) -> None:
        super().__init__(message)
        self.member = member


class SessionOwner(Protocol):
    """What a placed session needs of the pool that placed it (the pool itself, in practice)."""

    def release(self, member: PoolMember) -> None: ...

    async def classify(self, member: PoolMember, exc: BaseException) -> BaseException: ...


@dataclass(eq=False)
class PoolMember:
    """One server of the pool, in slot `slot`; `generation` counts replacements of that slot."""

    slot: int
    handle: ServerHandle
    generation: int = 0
    active: int = 0
    """Sessions open on it now."""
    served: int = 0
    """Sessions ever placed on it."""
    failed_probes: int = 0
    healthy: bool = True

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self.handle.base_url


@dataclass
class _Stats:
    infra_errors: int = 0
    replacements: int = 0
    replacement_failures: int = 0
    retired: list[PoolMember] = field(default_factory=list[PoolMember])


class PoolSession:
    """One session placed by the pool: `client` (connected) on `member`. Close it exactly once.

    `await session.failed(exc)` turns a client failure into an `InfrastructureError` when the
    server is dead (and retires it), else returns `exc` unchanged — raise what it returns.
    """

    def __init__(
        self, pool: SessionOwner, member: PoolMember, client: EnvClient[Any, Any, Any]
    ) -> None:
        self.pool = pool
        self.member = member
        self.client = client
        self._closed = False

    async def failed(self, exc: BaseException) -> BaseException:
        """Classify `exc` raised by this session's client (see the class docstring)."""
        return await self.pool.classify(self.member, exc)

    async def close(self) -> None:
        """Close the client and free the slot on the server. Idempotent; never raises."""
        if self._closed:
            return
        self._closed = True
        try:
            with contextlib.suppress(Exception):
                await self.client.close()
        finally:
            self.pool.release(self.member)
