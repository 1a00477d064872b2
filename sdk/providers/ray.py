"""`RayProvider`: environment servers as Ray actors, placed by Ray's scheduler.

Each server is one actor (resources declared: `num_cpus`, `memory`, custom `resources`) that
serves the environment with uvicorn from a thread of its own worker process, on a port the OS
picks when the actor binds it. The provider asks the actor for its URL; stop asks the actor to
shut the server down, then `ray.kill`s it. Actors are named `mcpgym-<run>-<n>` in the `mcpgym`
namespace and carry the provider's labels in their environment, so a `gc` can find a dead
run's actors with `ray.util.list_named_actors(all_namespaces=True)`.

Ray is optional (`pip install mcpgym[ray]`): it is imported when the first server starts. With
no Ray running, the provider calls `ray.init()` (local, no dashboard) and shuts it down again on
`aclose`; with `address=` (or `RAY_ADDRESS`) it joins an existing cluster and leaves it running.
On a cluster, bind `host="0.0.0.0"`: the URL then names the actor's node address.

Like `mcpgym serve` in a process, the actor's worker process imports the hosting layer
(`mcpgym.servers.background`); the provider's own process never does.

Example:
    >>> RayProvider("calendar_gym:CalendarEnv", num_cpus=0.25).kind
    'ray'
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import json
import os
from collections.abc import Mapping
from typing import Any

from mcpgym.providers.base import Provider, ProviderError, ServerHandle

__all__ = ["SERVER_ENTRY", "RayProvider"]

SERVER_ENTRY = "mcpgym.servers.background:BackgroundServer"
"""What the actor runs: a class taking `(target, host=..., **settings)` with `.start()`,
`.url`, `.stop()`."""

# Keep Ray on 127.0.0.1 and quiet (DESIGN.md §8): without these, Ray registers the node under
# the machine's external address and phones home.
_RAY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}


class _ServerActor:
    """Runs in the actor's worker process: one environment server."""

    def __init__(
        self, target: str, host: str, settings: dict[str, Any], labels: dict[str, str], entry: str
    ) -> None:
        os.environ["MCPGYM_LABELS"] = json.dumps(labels, sort_keys=True)
        module, _, attr = entry.partition(":")
        server_cls = getattr(importlib.import_module(module), attr)
        self.server = server_cls(target, host=host, **settings).start()
        self.host = host

    def info(self) -> dict[str, Any]:
        import ray  # pyright: ignore[reportMissingImports]

        url: str = self.server.url
        node = ray.util.get_node_ip_address()
        if self.host in ("0.0.0.0", "::"):
            url = f"http://{node}:{self.server.port}"
        return {"url": url, "pid": os.getpid(), "node": node}

    def ping(self) -> bool:
        return True

    def stop(self) -> None:
        self.server.stop()


class RayProvider(Provider):
    """Environment servers as Ray actors.

    Args:
        target: `MODULE:ATTR` of the environment (importable on every Ray worker).
        address: an existing cluster (`"auto"`, `"ray://host:10001"`, …); default: the running
            Ray of this process, else `RAY_ADDRESS`, else a local `ray.init()`.
        num_cpus / memory / resources: what each actor declares to the scheduler (logical CPUs,
            bytes, custom resources). The default 0.25 CPU fits four servers per core.
        host: the address each server binds (`127.0.0.1`; `0.0.0.0` on a multi-node cluster).
        settings: `ServerSettings` fields for every server (`{"max_sessions": 64}`).
        init_options: extra `ray.init` keyword arguments for a local Ray started here.
        ping_timeout_s: how long `alive` waits for an actor to answer.
    """

    kind = "ray"

    def __init__(
        self,
        target: str,
        *,
        address: str | None = None,
        num_cpus: float = 0.25,
        memory: int | None = None,
        resources: Mapping[str, float] | None = None,
        host: str = "127.0.0.1",
        settings: Mapping[str, Any] | None = None,
        init_options: Mapping[str, Any] | None = None,
        ping_timeout_s: float = 5.0,
        run_id: str | None = None,
        health_deadline_s: float = 60.0,
    ) -> None:
        super().__init__(run_id=run_id, health_deadline_s=health_deadline_s)
        self.target = target
        self.address = address
        self.num_cpus = num_cpus
        self.memory = memory
        self.resources = dict(resources or {})
        self.host = host
        self.settings = dict(settings or {})
        self.init_options = dict(init_options or {})
        self.ping_timeout_s = ping_timeout_s
        self._actors: dict[str, Any] = {}
        self._counter = itertools.count()
        self._owns_ray = False
        self._init_lock = asyncio.Lock()

    async def _ray(self) -> Any:
        try:
            import ray  # pyright: ignore[reportMissingImports]
        except ImportError as exc:
            raise ProviderError("RayProvider needs Ray: pip install 'mcpgym[ray]'") from exc
        async with self._init_lock:
            if not ray.is_initialized():
                for key, value in _RAY_ENV.items():
                    os.environ.setdefault(key, value)
                options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
                if self.address is None and "RAY_ADDRESS" not in os.environ:
                    # a local Ray of our own: every node address on loopback
                    options["num_cpus"] = os.cpu_count() or 2
                    options["_node_ip_address"] = "127.0.0.1"
                options.update(self.init_options)
                try:
                    ray.init(address=self.address, **options)
                except Exception as exc:
                    raise ProviderError(f"cannot start or reach Ray: {exc}") from exc
                self._owns_ray = True
        return ray

    async def _start(self) -> ServerHandle:
        ray = await self._ray()
        name = f"mcpgym-{self.run_id}-{next(self._counter)}"
        options: dict[str, Any] = {
            "name": name,
            "namespace": "mcpgym",
            "num_cpus": self.num_cpus,
            "max_restarts": 0,  # a dead server is the pool's to replace, not Ray's to restart
        }
        if self.memory is not None:
            options["memory"] = self.memory
        if self.resources:
            options["resources"] = self.resources
        actor_cls = ray.remote(_ServerActor)
        actor = actor_cls.options(**options).remote(
            self.target, self.host, self.settings, self.labels, SERVER_ENTRY
        )
        try:
            info = await asyncio.wait_for(actor.info.remote(), self.health_deadline_s)
        except BaseException as exc:
            ray.kill(actor, no_restart=True)
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ProviderError(f"Ray actor {name} for {self.target} did not start: {exc}") from exc
        self._actors[name] = actor
        return ServerHandle(id=name, base_url=info["url"], meta=info)

    async def _stop(self, handle: ServerHandle) -> None:
        actor = self._actors.pop(handle.id, None)
        if actor is None:
            return
        import ray  # pyright: ignore[reportMissingImports]

        # let uvicorn close its sockets; a dead or stuck actor is killed regardless
        with contextlib.suppress(Exception):
            await asyncio.wait_for(actor.stop.remote(), 10.0)
        ray.kill(actor, no_restart=True)

    async def alive(self, handle: ServerHandle) -> bool | None:
        """`False` once Ray reports the actor dead; `None` if it does not answer in time."""
        actor = self._actors.get(handle.id)
        if actor is None:
            return None
        from ray.exceptions import RayActorError  # pyright: ignore[reportMissingImports]

        try:
            return bool(await asyncio.wait_for(actor.ping.remote(), self.ping_timeout_s))
        except RayActorError:
            return False
        except TimeoutError:
            return None

    async def aclose(self) -> None:
        """Kill every actor started here; shut Ray down if this provider started it."""
        try:
            await super().aclose()
        finally:
            if self._owns_ray:
                import ray  # pyright: ignore[reportMissingImports]

                ray.shutdown()
                self._owns_ray = False
