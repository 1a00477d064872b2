"""Production mode's live environment instances: one service instance, or one per principal.

In production the environment is a long-lived service, reset once when first needed. When the
server is given a token map (token → reset options, e.g. `{"user": "alice@acme.test"}`), each
authenticated principal gets its own instance, reset with its own options, so an environment can
act as the user the token stands for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from mcpgym._workers import shared_pool
from mcpgym.env import Environment
from mcpgym.errors import ExecutionError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.factory import EnvFactory

__all__ = ["ProductionEnvs"]


class ProductionEnvs:
    """Lazily built, long-lived environments keyed by principal (`""` is the shared service)."""

    def __init__(self, factory: EnvFactory, principals: Mapping[str, Mapping[str, Any]]) -> None:
        self._factory = factory
        self._principals = principals
        self._envs: dict[str, MCPEnvironment] = {}
        self._lock = asyncio.Lock()

    async def for_token(self, token: str) -> MCPEnvironment:
        """The instance serving `token` (the shared one for `""` or a plain server token)."""
        key = token if token in self._principals else ""
        env = self._envs.get(key)
        if env is not None:
            return env
        async with self._lock:
            env = self._envs.get(key)
            if env is None:
                env = await self._build(dict(self._principals.get(key, {})))
                self._envs[key] = env
        return env

    async def _build(self, options: dict[str, Any]) -> MCPEnvironment:
        env: Environment[Any, Any, Any] = await shared_pool().run(self._factory)
        if not isinstance(env, MCPEnvironment):
            raise ExecutionError(
                f"production mode serves MCPEnvironment tools; got {type(env).__name__}"
            )
        await env.areset(**options)
        return env

    async def close(self) -> None:
        envs, self._envs = list(self._envs.values()), {}
        for env in envs:
            try:
                await env.aclose()
            except Exception:  # closing must finish for every instance
                continue
