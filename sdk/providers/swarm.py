"""`SwarmProvider`: each environment server a Docker Swarm service, placed by the Swarm scheduler.

One service per server (`replicas=1` by default) with its port published in **host mode** on a
host port the provider picks: a pool of N is N services, each with its own stable URL. Why not one
service with N replicas behind one port: that needs the ingress routing mesh (a virtual IP that
load-balances), and the mesh does not route on single-node engines like this one (the port is
published but connections hang), while the pool wants to address each server on its own anyway
(a WS session is sticky to one server). A host-mode port with a *fixed* published port keeps the
URL when Swarm replaces a task: the service's restart policy (`condition=any`) starts a new task
when the container dies — the rolling replacement is Swarm's, the URL does not change.

`publish_mode="ingress"` is accepted so the mesh can be tried on a real cluster; when its port
never answers while the task runs, `start` fails with a `ProviderError` that says the mesh does not
route here (`wait_healthy`). The engine must be in swarm mode (`ensure_swarm` initialises a single
node on 127.0.0.1) and, with no registry, dockerd needs `DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1` to
run local images (`.ci/docker-engine.sh` sets it). Services and their containers carry the
provider's labels; removal is verified by listing both.

Example:
    >>> async def main() -> None:  # doctest: +SKIP
    ...     async with SwarmProvider("mcpgym-calendar-gym:latest") as provider:
    ...         handle = await provider.start()
    ...         print(handle.base_url)  # http://127.0.0.1:41234
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from mcpgym.providers._engine import connect
from mcpgym.providers.base import Provider, ProviderError, ServerHandle, wait_healthy
from mcpgym.providers.docker import LABEL_IMAGE, LABEL_OWNER_HOST, Hardening

__all__ = ["SwarmProvider", "ensure_swarm", "free_port", "leave_swarm"]

_T = TypeVar("_T")
_ROOT_USERS = {"", "0", "root", "0:0", "root:root"}
#: Task states after which a task will never serve (Swarm starts a new task instead).
_FINAL = {"complete", "failed", "shutdown", "rejected", "orphaned", "remove"}
_SERVICE_LABEL = "com.docker.swarm.service.name"


def ensure_swarm(client: Any, advertise_addr: str = "127.0.0.1") -> bool:
    """Put the engine in single-node swarm mode unless it is; `True` if this call initialised it
    (so the caller knows it may `leave_swarm` afterwards)."""
    state = (client.info().get("Swarm") or {}).get("LocalNodeState", "")
    if state == "active":
        return False
    client.swarm.init(advertise_addr=advertise_addr, listen_addr=f"{advertise_addr}:2377")
    return True


def leave_swarm(client: Any) -> None:
    """Leave swarm mode (force: a single manager cannot leave otherwise)."""
    client.swarm.leave(force=True)


def free_port() -> int:
    """A TCP port free on every interface now (host-mode ports bind all interfaces)."""
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


class SwarmProvider(Provider):
    """Starts environment servers as Swarm services of `image` on the engine at `engine`.

    `replicas` is the tasks per service (more than one only makes sense with
    `publish_mode="ingress"` on a cluster whose mesh routes). `hardening` applies what a Swarm
    container spec can carry: dropped capabilities, read-only root, tmpfs, non-root user, memory
    and CPU limits, init (no-new-privileges and pids limits are not in the service API of the
    engines here). `restart_delay_s` is how long Swarm waits before replacing a dead task.
    `local_image=False` is for a cluster whose nodes pull `image` from a registry: the image is
    then not looked up on this engine (port 8000, no serve arguments can be added).
    """

    kind = "swarm"

    def __init__(
        self,
        image: str,
        *,
        engine: str | None = None,
        replicas: int = 1,
        publish_mode: Literal["host", "ingress"] = "host",
        hardening: Hardening | None = None,
        environment: Mapping[str, str] | None = None,
        mode: Literal["simulation", "production"] | None = None,
        serve_args: Sequence[str] = (),
        restart_delay_s: float = 0.5,
        local_image: bool = True,
        name_prefix: str = "mcpgym",
        run_id: str | None = None,
        health_deadline_s: float = 60.0,
    ) -> None:
        super().__init__(run_id=run_id, health_deadline_s=health_deadline_s)
        if replicas < 1:
            raise ValueError("replicas must be >= 1")
        if replicas > 1 and publish_mode == "host":
            # One host port takes one task per node: the others would stay pending forever.
            raise ValueError("host-mode ports serve one replica per service; use replicas=1")
        self.image = image
        self.engine = engine
        self.replicas = replicas
        self.publish_mode = publish_mode
        self.hardening = hardening or Hardening()
        self.environment = dict(environment or {})
        self.mode = mode
        self.serve_args = list(serve_args)
        self.restart_delay_s = restart_delay_s
        self.local_image = local_image
        self.name_prefix = name_prefix
        self._client: Any = None
        self._image_attrs: dict[str, Any] | None = None
        self._counter = itertools.count(1)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        # The containers each service was last seen healthy on (see `alive`).
        self._serving: dict[str, set[str]] = {}

    @property
    def labels(self) -> dict[str, str]:
        return {**super().labels, LABEL_OWNER_HOST: socket.gethostname(), LABEL_IMAGE: self.image}

    @property
    def client(self) -> Any:
        """The `docker.DockerClient` (connected on first use)."""
        if self._client is None:
            self._client = connect(self.engine)
        return self._client

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(16, thread_name_prefix="swarm")
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def _image(self) -> dict[str, Any]:
        from docker.errors import ImageNotFound

        if self._image_attrs is None:
            try:
                self._image_attrs = dict(self.client.images.get(self.image).attrs)
            except ImageNotFound:
                if not self.local_image:
                    return {}
                # Swarm would pull on the node; with no registry the task is rejected later and
                # less clearly, so say it now.
                raise ProviderError(
                    f"image {self.image} not on the engine (build it with `mcpgym build`)"
                ) from None
        return self._image_attrs

    def _service_kwargs(
        self, attrs: Mapping[str, Any], name: str, host_port: int
    ) -> dict[str, Any]:
        from docker.types import EndpointSpec, Mount, Resources, RestartPolicy, ServiceMode

        config = attrs.get("Config") or {}
        port = int((config.get("Labels") or {}).get("io.mcpgym.port", 8000))
        h = self.hardening
        user = h.user if h.user is not None else str(config.get("User") or "")
        # The engine API's own port form (the SDK's typed mapping has no room for the mode).
        published: Any = [
            {
                "Protocol": "tcp",
                "TargetPort": port,
                "PublishedPort": host_port,
                "PublishMode": self.publish_mode,
            }
        ]
        kw: dict[str, Any] = {
            "name": name,
            "labels": self.labels,
            "container_labels": self.labels,
            "env": [f"{k}={v}" for k, v in self.environment.items()],
            "mode": ServiceMode("replicated", replicas=self.replicas),
            "endpoint_spec": EndpointSpec(ports=published),
            # Swarm's own replacement of a dead task: at once, on the same published port.
            "restart_policy": RestartPolicy(
                condition="any", delay=int(self.restart_delay_s * 1e9), max_attempts=0
            ),
            "user": "65534:65534" if user.strip() in _ROOT_USERS else user,
            "read_only": h.read_only,
            "init": h.init,
            "stop_grace_period": int(1e9),
            "mounts": [
                Mount(target=path, source="", type="tmpfs", tmpfs_size=_size(opts))
                for path, opts in h.tmpfs.items()
            ],
            "resources": Resources(
                cpu_limit=int(h.cpus * 1e9) if h.cpus else None,
                mem_limit=_bytes(h.mem_limit) if h.mem_limit else None,
            ),
        }
        if h.drop_all_capabilities:
            kw["cap_drop"] = ["ALL"]
        if h.cap_add:
            kw["cap_add"] = list(h.cap_add)
        if self.mode is not None or self.serve_args:
            cmd = list(config.get("Cmd") or [])
            if not cmd:
                raise ProviderError(f"image {self.image} has no CMD to add serve arguments to")
            kw["command"] = cmd + (["--mode", self.mode] if self.mode else []) + self.serve_args
        return kw

    def _start_sync(self) -> ServerHandle:
        from docker.errors import APIError

        attrs = self._image()
        name = f"{self.name_prefix}-{self.run_id}-{next(self._counter)}"
        host_port = free_port()
        try:
            service = self.client.services.create(
                self.image, **self._service_kwargs(attrs, name, host_port)
            )
        except APIError as exc:
            if exc.status_code == 503:  # "This node is not a swarm manager": nothing was made
                raise ProviderError(
                    "the engine is not in swarm mode: docker swarm init --advertise-addr 127.0.0.1"
                    " (or mcpgym.providers.swarm.ensure_swarm)"
                ) from exc
            with contextlib.suppress(ProviderError):
                self._remove_sync(name)  # a half-made service must not linger
            raise ProviderError(f"cannot create service {name}: {exc}") from exc
        return ServerHandle(
            id=name,
            base_url=f"http://127.0.0.1:{host_port}",
            meta={"service_id": service.id, "name": name, "image": self.image, "port": host_port},
        )

    async def _start(self) -> ServerHandle:
        return await self._call(self._start_sync)

    def _listed(self, name: str) -> tuple[bool, list[Any]]:
        """Whether a service named exactly `name` is listed, and the containers of its tasks."""
        services = [s for s in self.client.services.list(filters={"name": name}) if s.name == name]
        # The low-level listing: the high-level one inspects each container and races removal.
        containers = self.client.api.containers(
            all=True, filters={"label": f"{_SERVICE_LABEL}={name}"}
        )
        return bool(services), list(containers)

    def _remove_sync(self, name: str, deadline_s: float = 30.0) -> None:
        from docker.errors import APIError, NotFound

        try:
            self.client.services.get(name).remove()
        except NotFound:
            pass
        except APIError as exc:
            raise ProviderError(f"cannot remove service {name}: {exc}") from exc
        # Removal verified by listing: the service, then its tasks' containers (which Swarm
        # stops and removes asynchronously), so the host port is free again when we return.
        end = time.monotonic() + deadline_s
        while True:
            service, containers = self._listed(name)
            if not service and not containers:
                return
            if time.monotonic() >= end:
                raise ProviderError(f"service {name} still listed {deadline_s:.0f}s after removal")
            time.sleep(0.1)

    async def _stop(self, handle: ServerHandle) -> None:
        self._serving.pop(handle.id, None)
        await self._call(self._remove_sync, handle.id)

    def tasks(self, handle: ServerHandle) -> list[dict[str, Any]]:
        """The Swarm tasks of `handle`'s service (empty when the service is gone)."""
        from docker.errors import NotFound

        try:
            return list(self.client.services.get(handle.id).tasks())
        except NotFound:
            return []

    def running_containers(self, handle: ServerHandle) -> list[str]:
        """Ids of the running containers of `handle`'s tasks, as the engine lists them (a task's
        own state lags: it may say `starting` while its server already answers)."""
        listed = self.client.api.containers(
            filters={"label": f"{_SERVICE_LABEL}={handle.id}", "status": "running"}
        )
        return [str(c["Id"]) for c in listed]

    async def alive(self, handle: ServerHandle) -> bool | None:
        """`False` once the service is gone or the container `wait_healthy` last saw serving no
        longer runs, else `None` (then `/health` decides).

        Swarm restarts a dead task on the same URL, but the sessions it held are lost, so for a
        pool the server is dead: the pool replaces it with a new service and counts the lost
        episodes as infrastructure errors. Without that, a task restarted between the loss and
        the pool's health probe would make a lost session look like an agent failure.
        """

        def check() -> bool | None:
            if not self._listed(handle.id)[0]:
                return False
            seen = self._serving.get(handle.id)
            if seen and not seen & set(self.running_containers(handle)):
                return False
            return None

        return await self._call(check)

    async def _logs(self, handle: ServerHandle) -> str:
        from docker.errors import APIError, NotFound

        def read() -> str:
            try:
                raw = self.client.services.get(handle.id).logs(stdout=True, stderr=True)
                return b"".join(raw).decode("utf-8", errors="replace")
            except (NotFound, APIError):
                return ""

        return await self._call(read)

    def _rejected(self, handle: ServerHandle) -> str | None:
        """The engine's error when every task so far ended without ever running, else None."""
        tasks = self.tasks(handle)
        if not tasks:
            return "the service is gone"
        errors = [str((t.get("Status") or {}).get("Err") or "") for t in tasks]
        final = [(t.get("Status") or {}).get("State") in _FINAL for t in tasks]
        if len(tasks) >= 2 and all(final) and any(errors):
            return "; ".join(sorted({e for e in errors if e}))
        return None

    async def wait_healthy(self, handle: ServerHandle, deadline_s: float | None = None) -> None:
        """Wait for `/health`, failing fast with the engine's error when tasks keep failing, and
        saying so when an ingress-mode port never answers while its task runs."""
        loop = asyncio.get_running_loop()
        end = loop.time() + (deadline_s or self.health_deadline_s)
        while True:
            try:
                await wait_healthy(handle.base_url, deadline_s=min(0.5, end - loop.time()))
                running = await self._call(self.running_containers, handle)
                self._serving[handle.id] = set(running)
                return
            except ProviderError as exc:
                why = await self._call(self._rejected, handle)
                if why is not None:
                    logs = (await self.logs(handle))[-2000:]
                    raise ProviderError(f"{handle.id} cannot run: {why}; logs:\n{logs}") from exc
                if loop.time() >= end:
                    running = await self._call(self.running_containers, handle)
                    if self.publish_mode == "ingress" and running:
                        raise ProviderError(
                            f"{handle.id}: the task runs but its ingress port "
                            f"{handle.base_url} never answered — the routing mesh does not "
                            "route on this engine; use publish_mode='host'"
                        ) from exc
                    raise

    async def aclose(self) -> None:
        try:
            await asyncio.gather(*(self.stop(h) for h in list(self._handles.values())))
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _bytes(text: str) -> int:
    """`"512m"` → bytes (the Docker size notation `Hardening` uses)."""
    text = text.strip().lower().removesuffix("b")
    if text and text[-1] in _UNITS:
        return int(float(text[:-1]) * _UNITS[text[-1]])
    return int(text)


def _size(options: str) -> int | None:
    """The `size=` of a tmpfs option string, in bytes."""
    for part in options.split(","):
        key, _, value = part.partition("=")
        if key.strip() == "size" and value:
            return _bytes(value)
    return None
