"""`EnvPool`: N environment servers from one provider, and a client-side session router.

The router places each session on the healthy member with the fewest open sessions (ties: the
one that served fewest), and the session stays on that server (a WebSocket session is one
environment instance there). A background task probes every member; a member whose provider says
it is gone, or whose `/health` fails `unhealthy_after` probes in a row, is retired, stopped and
replaced in its slot. When a session fails with a lost connection or a timeout, the pool checks
its server at once: if the server is dead the failure is an `InfrastructureError` — the caller
retries the episode elsewhere and never counts it against the agent — otherwise the original
error stands (the environment, not the infrastructure, failed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from types import TracebackType
from typing import Any, Self

import httpx

from mcpgym.client import EnvClient
from mcpgym.errors import ClientError, RemoteError
from mcpgym.pool._members import InfrastructureError, PoolMember, PoolSession, _Stats
from mcpgym.providers.base import Provider, ServerHandle

__all__ = ["EnvPool"]

log = logging.getLogger("mcpgym.pool")


class EnvPool:
    """N servers from `provider`, with least-load session placement and replacement.

    Args:
        provider: starts each server (process, docker, swarm, ray, kubernetes, …).
        size: how many servers to keep running.
        max_sessions_per_server: open sessions a server may hold (`None`: no limit); beyond it
            `session()` waits for a free slot, at most `acquire_timeout_s`.
        health_interval_s: seconds between background health probes of every member.
        health_timeout_s: how long one `/health` probe may take.
        unhealthy_after: failed probes in a row that retire a member.
        replace: start a new server in the slot of a retired one.
        acquire_timeout_s: how long `session()` waits for a healthy server with a free slot.
        client_timeout: the `EnvClient` reply timeout of pool sessions.
        progress: called as `progress(stage, None)` when a server of `start()` begins and
            `progress(stage, "ready")` (or `"failed"`) when it is healthy (or not); `mcpgym eval
            --pool` draws it on stderr.

    Example:
        >>> async def main() -> None:  # doctest: +SKIP
        ...     async with EnvPool(ProcessProvider("calendar_gym:CalendarEnv"), size=4) as pool:
        ...         async with pool.session() as env:
        ...             await env.reset(seed=1)
        ...             obs = await env.call_tool("calendars_list")
    """

    def __init__(
        self,
        provider: Provider,
        size: int,
        *,
        max_sessions_per_server: int | None = None,
        health_interval_s: float = 1.0,
        health_timeout_s: float = 5.0,
        unhealthy_after: int = 3,
        replace: bool = True,
        acquire_timeout_s: float = 120.0,
        client_timeout: float | None = 60.0,
        progress: Callable[[str, str | None], None] | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self.provider = provider
        self.size = size
        self.max_sessions_per_server = max_sessions_per_server
        self.health_interval_s = health_interval_s
        self.health_timeout_s = health_timeout_s
        self.unhealthy_after = unhealthy_after
        self.replace = replace
        self.acquire_timeout_s = acquire_timeout_s
        self.client_timeout = client_timeout
        self.progress = progress
        self._members: list[PoolMember] = []
        self._stats = _Stats()
        self._changed = asyncio.Condition()
        self._tasks: set[asyncio.Task[None]] = set()
        self._health: asyncio.Task[None] | None = None
        self._http: httpx.AsyncClient | None = None
        self._closing = False

    # -- life cycle --------------------------------------------------------------------------

    async def start(self) -> Self:
        """Start `size` servers at once and wait until all are healthy (or raise, stopping all)."""
        self._http = httpx.AsyncClient(timeout=self.health_timeout_s, trust_env=False)
        try:
            handles = await asyncio.gather(
                *(self._start_one(slot) for slot in range(self.size)), return_exceptions=True
            )
            errors = [h for h in handles if isinstance(h, BaseException)]
            if errors:
                raise errors[0]
            self._members = [
                PoolMember(slot, h) for slot, h in enumerate(handles) if isinstance(h, ServerHandle)
            ]
        except BaseException:
            await self.aclose()
            raise
        self._health = asyncio.create_task(self._watch(), name="mcpgym-pool-health")
        return self

    async def _start_one(self, slot: int) -> ServerHandle:
        if self.progress is None:
            return await self.provider.start()
        stage = f"{self.provider.kind} server {slot + 1} of {self.size}"
        self.progress(stage, None)
        try:
            handle = await self.provider.start()
        except BaseException:
            self.progress(stage, "failed")
            raise
        self.progress(stage, f"ready at {handle.base_url}")
        return handle

    async def aclose(self) -> None:
        """Stop the health checks and replacements, then every server. Idempotent."""
        self._closing = True
        tasks = [t for t in (self._health, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._members.clear()
        async with self._changed:
            self._changed.notify_all()
        await self.provider.aclose()
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- what it holds -----------------------------------------------------------------------

    @property
    def members(self) -> list[PoolMember]:
        """The servers in service now (healthy as last seen), by slot."""
        return sorted(self._members, key=lambda m: m.slot)

    @property
    def retired(self) -> list[PoolMember]:
        """Servers taken out of service (dead or failing health checks), oldest first."""
        return list(self._stats.retired)

    def stats(self) -> dict[str, Any]:
        """Counters for reports: sessions per member, infra errors, replacements (JSON-able)."""
        s = self._stats

        def row(m: PoolMember) -> dict[str, Any]:
            return {
                "slot": m.slot,
                "generation": m.generation,
                "id": m.handle.id,
                "url": m.url,
                "served": m.served,
                "active": m.active,
                "healthy": m.healthy,
            }

        return {
            "provider": self.provider.kind,
            "size": self.size,
            "infra_errors": s.infra_errors,
            "replacements": s.replacements,
            "replacement_failures": s.replacement_failures,
            "members": [row(m) for m in self.members],
            "retired": [row(m) for m in s.retired],
        }

    def describe(self) -> str:
        """`pool process:4` — names the pool in reports."""
        return f"pool {self.provider.kind}:{self.size}"

    async def wait_full(self, within_s: float = 60.0) -> None:
        """Wait until `size` healthy members serve (e.g. after a replacement)."""
        async with asyncio.timeout(within_s), self._changed:
            await self._changed.wait_for(lambda: len(self._members) >= self.size)

    # -- sessions ----------------------------------------------------------------------------

    async def acquire(self, **client_options: Any) -> PoolSession:
        """Place a new session on the least-loaded healthy server and connect its client.

        `client_options` go to `EnvClient` (`observation_type`, `headers`, `timeout`, …). A server
        found dead while connecting is retired and the next one tried. Raises
        `InfrastructureError` when no server can be had within `acquire_timeout_s`.
        """
        client_options.setdefault("timeout", self.client_timeout)
        loop = asyncio.get_running_loop()
        end = loop.time() + self.acquire_timeout_s
        while True:
            member = await self.reserve(max(0.0, end - loop.time()))
            client: EnvClient[Any, Any, Any] = EnvClient(member.url, **client_options)
            try:
                await client.connect()
            except ClientError as exc:
                self.release(member)
                verdict = await self.diagnose(member, exc)
                if not isinstance(verdict, InfrastructureError):
                    raise verdict from None
                continue  # nothing ran there yet: try the next server
            return PoolSession(self, member, client)

    @contextlib.asynccontextmanager
    async def session(self, **client_options: Any) -> AsyncGenerator[EnvClient[Any, Any, Any]]:
        """`async with pool.session() as client:` — an `EnvClient` on one server of the pool.

        A failure of the client whose server turns out dead leaves the block as an
        `InfrastructureError` (chained to the client's error); other errors pass unchanged.
        """
        placed = await self.acquire(**client_options)
        try:
            yield placed.client
        except ClientError as exc:
            verdict = await placed.failed(exc)
            if verdict is exc:
                raise
            raise verdict from exc
        finally:
            await placed.close()

    async def reserve(self, within_s: float | None = None) -> PoolMember:
        """Count one more session on the least-loaded healthy member and return it (no client).

        Pair with `release(member)`. For callers bringing their own client (the sync twin).
        """
        limit = self.acquire_timeout_s if within_s is None else within_s
        try:
            async with asyncio.timeout(limit), self._changed:
                member = await self._changed.wait_for(self._pick)
        except TimeoutError:
            raise InfrastructureError(
                f"{self.describe()}: no healthy server with a free slot within {limit:.0f}s"
            ) from None
        if self._closing or member is None:
            raise InfrastructureError(f"{self.describe()} is closed")
        member.active += 1
        member.served += 1
        return member

    def release(self, member: PoolMember) -> None:
        """The session reserved on `member` has ended."""
        member.active = max(0, member.active - 1)
        self._notify()

    def _pick(self) -> PoolMember | None:
        if self._closing:
            return _CLOSED
        cap = self.max_sessions_per_server
        free = [m for m in self._members if m.healthy and (cap is None or m.active < cap)]
        return min(free, key=lambda m: (m.active, m.served, m.slot), default=None)

    def _notify(self) -> None:
        async def wake() -> None:
            async with self._changed:
                self._changed.notify_all()

        self._spawn(wake())

    # -- failures ----------------------------------------------------------------------------

    async def classify(self, member: PoolMember, exc: BaseException) -> BaseException:
        """`diagnose`, counting an infrastructure verdict as an infra error of a session."""
        verdict = await self.diagnose(member, exc)
        if isinstance(verdict, InfrastructureError):
            self._stats.infra_errors += 1
        return verdict

    async def diagnose(self, member: PoolMember, exc: BaseException) -> BaseException:
        """`InfrastructureError` if `exc` came from `member` being dead (which retires it)."""
        if isinstance(exc, RemoteError) or not isinstance(exc, ClientError | OSError):
            return exc  # the server answered: whatever went wrong, it is alive
        if member.healthy and await self._probe(member):
            return exc
        self.retire(member, f"lost under a session: {exc}")
        return InfrastructureError(f"server {member.handle.id} ({member.url}) died: {exc}", member)

    def retire(self, member: PoolMember, why: str) -> None:
        """Take `member` out of service and (with `replace`) start a server in its slot."""
        if not member.healthy:
            return
        member.healthy = False
        log.warning("pool: retiring %s (%s): %s", member.handle.id, member.url, why)
        if member in self._members:
            self._members.remove(member)
        self._stats.retired.append(member)
        self._notify()
        if not self._closing:
            self._spawn(self._replace(member))

    async def _replace(self, dead: PoolMember) -> None:
        with contextlib.suppress(Exception):  # best effort: the engine may have removed it
            await self.provider.stop(dead.handle)
        if not self.replace:
            return
        delay = 0.5
        while not self._closing:
            try:
                handle = await self.provider.start()
            except Exception as exc:
                self._stats.replacement_failures += 1
                log.warning("pool: replacing slot %d failed: %s", dead.slot, exc)
                await asyncio.sleep(delay)  # back off: the engine may be briefly unable to start
                delay = min(delay * 2, 10.0)
                continue
            if self._closing:
                await self.provider.stop(handle)
                return
            self._members.append(PoolMember(dead.slot, handle, generation=dead.generation + 1))
            self._stats.replacements += 1
            self._notify()
            return

    async def _probe(self, member: PoolMember) -> bool | None:
        """One health check: `False` if the provider says the server is gone (certain), `None`
        if `/health` did not answer 200 in time, `True` if it did."""
        try:
            alive = await self.provider.alive(member.handle)
        except Exception:
            alive = None
        if alive is False:
            return False
        http = self._http
        if http is None:
            return None
        try:
            resp = await http.get(member.url.rstrip("/") + "/health")
        except httpx.HTTPError:
            return None
        return True if resp.status_code == 200 else None

    async def _watch(self) -> None:
        while not self._closing:
            await asyncio.sleep(self.health_interval_s)
            members = [m for m in self._members if m.healthy]
            results = await asyncio.gather(*(self._probe(m) for m in members))
            for member, ok in zip(members, results, strict=True):
                member.failed_probes = 0 if ok else member.failed_probes + 1
                if ok is False:
                    self.retire(member, "the provider reports it gone")
                elif member.failed_probes >= self.unhealthy_after:
                    self.retire(member, f"{member.failed_probes} failed health checks")

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


_CLOSED: Any = object()
"""What `_pick` returns once the pool closes, so waiters wake up and fail."""
