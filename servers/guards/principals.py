"""Production mode's live environment instances: one service instance, or one per principal.

In production the environment is a long-lived service, reset once when first needed. When the
server is given a token map (token → reset options, e.g. `{"user": "alice@acme.test"}`), each
authenticated principal gets its own instance, reset with its own options, so an environment can
act as the user the token stands for.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from mcpgym.env import Environment
from mcpgym.errors import ExecutionError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.runtime import crashes
from mcpgym.runtime.workers import shared_pool
from mcpgym.servers.factory import EnvFactory

__all__ = ["ProductionEnvs", "load_principals"]


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
        try:
            env: Environment[Any, Any, Any] = await shared_pool().run(self._factory)
        except Exception as exc:
            raise ExecutionError(
                f"environment factory raised {type(exc).__name__}: {exc}",
                exception=type(exc).__name__,
                **crashes.record(None, "the environment factory (production)", exc),
            ) from exc
        crashes.tag_session(env, "production" + (" principal" if options else ""))
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


def load_principals(path: str) -> dict[str, dict[str, Any]]:
    """The `--principals` file: a JSON object mapping bearer token -> reset options."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read principals file {path!r}: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{path}: expected a JSON object mapping token -> reset options")
    return data
