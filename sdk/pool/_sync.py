"""`SyncEnvPool`: the blocking twin of `EnvPool`.

The pool (its health checks and replacements) runs on a private event loop in a daemon thread
owned by this object; sessions are `SyncEnvClient`s opened in the caller's thread, so a blocking
trainer loop never waits on another thread's frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Generator
from typing import Any, Self, TypeVar

from mcpgym.client import SyncEnvClient
from mcpgym.errors import ClientError
from mcpgym.pool._members import InfrastructureError, PoolMember
from mcpgym.pool._pool import EnvPool
from mcpgym.providers.base import Provider

__all__ = ["SyncEnvPool"]

T = TypeVar("T")


class SyncEnvPool:
    """Blocking twin of `EnvPool` (same arguments); a context manager.

    Example:
        >>> provider = ProcessProvider("calendar_gym:CalendarEnv")  # doctest: +SKIP
        >>> with SyncEnvPool(provider, size=2) as pool:  # doctest: +SKIP
        ...     with pool.session() as env:
        ...         env.reset(seed=1)
    """

    def __init__(self, provider: Provider, size: int, **options: Any) -> None:
        self.pool = EnvPool(provider, size, **options)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        if loop is None:
            coro.close()
            raise RuntimeError("the pool is not started (use `with SyncEnvPool(...)` or start())")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def start(self) -> Self:
        """Start the servers (see `EnvPool.start`)."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="mcpgym-pool", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            self._call(self.pool.start())
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop every server and the pool's thread. Idempotent."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            self._call(self.pool.aclose())
        finally:
            self._loop = self._thread = None
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=30)
            loop.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def session(self, **client_options: Any) -> Generator[SyncEnvClient[Any, Any, Any]]:
        """`with pool.session() as client:` — a `SyncEnvClient` on one server of the pool.

        As `EnvPool.session`: a failure whose server is dead leaves as `InfrastructureError`.
        """
        client_options.setdefault("timeout", self.pool.client_timeout)
        while True:
            member = self._call(self.pool.reserve())
            client: SyncEnvClient[Any, Any, Any] = SyncEnvClient(member.url, **client_options)
            try:
                client.connect()
            except ClientError as exc:
                self._release(member)
                verdict = self._call(self.pool.diagnose(member, exc))
                if isinstance(verdict, InfrastructureError):
                    continue  # nothing ran there yet: try the next server
                raise
            break
        try:
            yield client
        except ClientError as exc:
            verdict = self._call(self.pool.classify(member, exc))
            if verdict is exc:
                raise
            raise verdict from exc
        finally:
            with contextlib.suppress(Exception):
                client.close()
            self._release(member)

    def _release(self, member: PoolMember) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.pool.release, member)

    @property
    def members(self) -> list[PoolMember]:
        """See `EnvPool.members`."""
        return self.pool.members

    def stats(self) -> dict[str, Any]:
        """See `EnvPool.stats`."""
        return self.pool.stats()

    def wait_full(self, within_s: float = 60.0) -> None:
        """See `EnvPool.wait_full`."""
        self._call(self.pool.wait_full(within_s))
