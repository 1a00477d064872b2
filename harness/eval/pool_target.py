"""Episodes on an `EnvPool`: each episode a session placed by the pool's router.

`PoolTarget` is the `EnvTarget` the runner uses when it is given a pool: `open()` places a new
WebSocket session on the least-loaded healthy server; every call of the session goes through
the pool's verdict, so a server that dies under the episode surfaces as
`mcpgym.pool.InfrastructureError` (the loop records `infra_error`, the runner retries the
episode elsewhere) while an error of a live server stays the episode's own.

Example:
    >>> from mcpgym.pool import EnvPool
    >>> from mcpgym.providers.process import ProcessProvider
    >>> PoolTarget(EnvPool(ProcessProvider("calendar_gym:CalendarEnv"), size=3)).describe()
    'calendar_gym:CalendarEnv'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from mcpgym.harness.sessions import EnvSession, _RemoteSession
from mcpgym.pool import EnvPool, PoolSession
from mcpgym.types import Action, Observation, StepResult, ToolInfo

__all__ = ["PoolTarget"]

T = TypeVar("T")


class PoolTarget:
    """Makes one pool session per episode (see the module docstring)."""

    def __init__(self, pool: EnvPool, *, name: str | None = None) -> None:
        self.pool = pool
        self.name = name

    async def open(self) -> EnvSession:
        return _PooledSession(await self.pool.acquire())

    def describe(self) -> str:
        """The environment's name: `name`, else what the provider serves (its target or image);
        the report names the pool apart (`pool process:3` is where, not what, was evaluated)."""
        served = getattr(self.pool.provider, "target", None) or getattr(
            self.pool.provider, "image", None
        )
        return self.name or (str(served) if served else self.pool.describe())


class _PooledSession:
    def __init__(self, placed: PoolSession) -> None:
        self.placed = placed
        self.inner = _RemoteSession(placed.client)

    async def _guard(self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except Exception as exc:
            verdict = await self.placed.failed(exc)
            if verdict is exc:
                raise
            raise verdict from exc

    async def reset(self, options: Mapping[str, Any]) -> StepResult[Observation]:
        return await self._guard(lambda: self.inner.reset(options))

    async def tools(self) -> list[ToolInfo]:
        return await self._guard(self.inner.tools)

    async def step(
        self, action: Action | Mapping[str, Any], timeout_s: float | None
    ) -> StepResult[Observation]:
        return await self._guard(lambda: self.inner.step(action, timeout_s))

    async def close(self) -> None:
        await self.placed.close()
