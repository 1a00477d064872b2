"""`DockerProvider`: each environment server a hardened container on a Docker (or Podman) engine.

Hardened by default (`Hardening`): every capability dropped, no-new-privileges, read-only root
with a tmpfs on /tmp, a non-root user, pids/memory/CPU limits, `init=True` so SIGTERM reaches the
server; the port is published on 127.0.0.1 only. Every container carries the provider's labels,
and a reaper process (`mcpgym.providers.reaper`) removes the run's containers when the provider
is closed or its owner dies, a SIGKILL included; `mcpgym providers gc` removes what a crashed
caller left where no reaper ran (`reaper=False`). Removal is verified by listing with an
exact name filter. The image is pulled when missing (`pull="missing"`), e.g. from a registry that
`mcpgym push` filled.

Example:
    >>> async def main() -> None:  # doctest: +SKIP
    ...     async with DockerProvider("mcpgym-guess:latest") as provider:
    ...         handle = await provider.start()
    ...         print(handle.base_url)  # http://127.0.0.1:32768
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from mcpgym.providers._engine import connect, exact_name_filter, listed, wait_removed
from mcpgym.providers.base import Provider, ProviderError, ServerHandle, wait_healthy
from mcpgym.providers.reaper import Reaper

__all__ = ["LABEL_IMAGE", "LABEL_OWNER_HOST", "DockerProvider", "Hardening"]

LABEL_OWNER_HOST = "io.mcpgym.owner-host"
LABEL_IMAGE = "io.mcpgym.image"
_T = TypeVar("_T")
_ROOT_USERS = {"", "0", "root", "0:0", "root:root"}
Pull = Literal["missing", "always", "never"]


@dataclass(frozen=True)
class Hardening:
    """The isolation a container gets. The defaults are the strict ones; relax field by field.

    `user=None` keeps the image's user unless that is root, which becomes `nobody` (65534).
    `network` names an engine network to attach to (`None`: the engine's default bridge); the
    port is always published on 127.0.0.1 only.
    """

    drop_all_capabilities: bool = True
    cap_add: Sequence[str] = ()
    no_new_privileges: bool = True
    read_only: bool = True
    tmpfs: Mapping[str, str] = field(
        default_factory=lambda: {"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"}
    )
    user: str | None = None
    pids_limit: int | None = 256
    mem_limit: str | None = "512m"
    cpus: float | None = 1.0
    network: str | None = None
    init: bool = True

    def run_kwargs(self, image_user: str) -> dict[str, Any]:
        """The `docker` SDK `containers.run` arguments these settings amount to."""
        kw: dict[str, Any] = {"init": self.init, "read_only": self.read_only}
        if self.drop_all_capabilities:
            kw["cap_drop"] = ["ALL"]
        if self.cap_add:
            kw["cap_add"] = list(self.cap_add)
        if self.no_new_privileges:
            kw["security_opt"] = ["no-new-privileges"]
        if self.tmpfs:
            kw["tmpfs"] = dict(self.tmpfs)
        user = self.user if self.user is not None else image_user
        kw["user"] = "65534:65534" if user.strip() in _ROOT_USERS else user
        if self.pids_limit is not None:
            kw["pids_limit"] = self.pids_limit
        if self.mem_limit is not None:
            kw["mem_limit"] = self.mem_limit
        if self.cpus is not None:
            kw["nano_cpus"] = int(self.cpus * 1e9)
        if self.network is not None:
            kw["network"] = self.network
        return kw


class DockerProvider(Provider):
    """Starts environment containers from `image` on the engine at `engine` (`$DOCKER_HOST`).

    `mode` and `serve_args` are appended to the image's `mcpgym serve` CMD (later flags win).
    `stop_grace_s` is how long a server gets to exit on SIGTERM before it is killed. `reaper`
    starts the run's reaper with the first container (see the module docstring).
    """

    kind = "docker"
    #: The create-time stop timeout (None: the engine's default); Podman's subclass sets 0.
    create_stop_timeout: int | None = None

    def __init__(
        self,
        image: str,
        *,
        engine: str | None = None,
        hardening: Hardening | None = None,
        environment: Mapping[str, str] | None = None,
        mode: Literal["simulation", "production"] | None = None,
        serve_args: Sequence[str] = (),
        pull: Pull = "missing",
        stop_grace_s: float = 1.0,
        name_prefix: str = "mcpgym",
        run_kwargs: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        health_deadline_s: float = 60.0,
        reaper: bool = True,
    ) -> None:
        super().__init__(run_id=run_id, health_deadline_s=health_deadline_s)
        self.reaper = reaper
        self._reaper: Reaper | None = None
        self.image = image
        self.engine = engine
        self.hardening = hardening or Hardening()
        self.environment = dict(environment or {})
        self.mode = mode
        self.serve_args = list(serve_args)
        self.pull = pull
        self.stop_grace_s = stop_grace_s
        self.name_prefix = name_prefix
        self.extra_run_kwargs = dict(run_kwargs or {})
        self._client: Any = None
        self._image_attrs: dict[str, Any] | None = None
        self._counter = itertools.count(1)
        # The SDK is blocking; a private pool lets N starts overlap instead of queueing on the
        # loop's small default executor.
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    @property
    def labels(self) -> dict[str, str]:
        return {**super().labels, LABEL_OWNER_HOST: socket.gethostname(), LABEL_IMAGE: self.image}

    async def _call(self, fn: Callable[..., _T], *args: Any) -> _T:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(32, thread_name_prefix="mcpgym")
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    @property
    def client(self) -> Any:
        """The `docker.DockerClient` (connected on first use)."""
        if self._client is None:
            self._client = connect(self.engine)
        return self._client

    def _ensure_image(self) -> dict[str, Any]:
        from docker.errors import APIError, ImageNotFound

        if self._image_attrs is not None and self.pull != "always":
            return self._image_attrs
        images = self.client.images
        try:
            if self.pull == "always":
                images.pull(self.image)
            image = images.get(self.image)
        except ImageNotFound:
            if self.pull == "never":
                raise ProviderError(f"image {self.image} not found (pull='never')") from None
            try:
                images.pull(self.image)
                image = images.get(self.image)
            except (APIError, ImageNotFound) as exc:
                raise ProviderError(f"cannot pull {self.image}: {exc}") from exc
        except APIError as exc:
            raise ProviderError(f"cannot get {self.image}: {exc}") from exc
        self._image_attrs = dict(image.attrs)
        return self._image_attrs

    def container_port(self, attrs: Mapping[str, Any]) -> int:
        """The port the server listens on inside: the image's io.mcpgym.port label, else 8000."""
        labels = (attrs.get("Config") or {}).get("Labels") or {}
        return int(labels.get("io.mcpgym.port", 8000))

    def _command(self, attrs: Mapping[str, Any]) -> list[str] | None:
        if self.mode is None and not self.serve_args:
            return None
        cmd = list((attrs.get("Config") or {}).get("Cmd") or [])
        if not cmd:
            raise ProviderError(f"image {self.image} has no CMD to add serve arguments to")
        return cmd + (["--mode", self.mode] if self.mode else []) + self.serve_args

    def _run_kwargs(self, attrs: Mapping[str, Any], name: str) -> dict[str, Any]:
        port = self.container_port(attrs)
        user = str((attrs.get("Config") or {}).get("User") or "")
        kw = self.hardening.run_kwargs(user)
        kw.update(
            name=name,
            detach=True,
            labels=self.labels,
            environment=self.environment,
            ports={f"{port}/tcp": ("127.0.0.1", None)},
        )
        if self.create_stop_timeout is not None:
            kw["stop_timeout"] = self.create_stop_timeout
        command = self._command(attrs)
        if command is not None:
            kw["command"] = command
        kw.update(self.extra_run_kwargs)
        return kw

    def _run(self, kwargs: dict[str, Any]) -> Any:
        """`containers.run`, plus the create-time stop timeout the high-level call cannot pass."""
        stop_timeout = kwargs.pop("stop_timeout", None)
        if stop_timeout is None:
            return self.client.containers.run(self.image, **kwargs)
        # The SDK's own run() → create() argument translation, then the low-level create, which
        # takes `stop_timeout`; detach is implied (we start it ourselves).
        from docker.models.containers import (
            _create_container_args,  # pyright: ignore[reportAttributeAccessIssue]
        )

        kwargs.pop("detach", None)
        create = _create_container_args(
            {**kwargs, "image": self.image, "version": self.client.api._version}
        )
        created = self.client.api.create_container(**create, stop_timeout=stop_timeout)
        self.client.api.start(created["Id"])
        return self.client.containers.get(created["Id"])

    def _start_sync(self) -> ServerHandle:
        from docker.errors import APIError

        attrs = self._ensure_image()
        name = f"{self.name_prefix}-{self.run_id}-{next(self._counter)}"
        port = self.container_port(attrs)
        try:
            container = self._run(self._run_kwargs(attrs, name))
        except APIError as exc:
            self._remove_sync(name)  # a created-but-not-started container must not linger
            raise ProviderError(f"cannot start {self.image}: {exc}") from exc
        try:
            container.reload()
            ports: dict[str, Any] = container.attrs["NetworkSettings"]["Ports"] or {}
            bound: list[dict[str, str]] = ports.get(f"{port}/tcp") or []
            host_port = int(bound[0]["HostPort"])
        except (APIError, KeyError, IndexError, TypeError, ValueError) as exc:
            self._remove_sync(name)
            raise ProviderError(f"{name}: no published port for {port}/tcp ({exc})") from exc
        return ServerHandle(
            id=name,
            base_url=f"http://127.0.0.1:{host_port}",
            meta={"container_id": container.id, "name": name, "image": self.image},
        )

    async def _start(self) -> ServerHandle:
        if self.reaper and self._reaper is None:  # before the first container exists
            self._reaper = Reaper.spawn(self.run_id, engine=self.engine)
        return await self._call(self._start_sync)

    def _remove_sync(self, name: str) -> None:
        # By name through the engine's API, never inspect-then-act: the container's reaper or a
        # concurrent stop may remove it at any moment, and Podman then answers an inspect with 500
        # ("no such container"). The listing, not an error text, says whether it is gone.
        from docker.errors import APIError

        if not listed(self.client, exact_name_filter(name)):
            return
        with contextlib.suppress(APIError):  # not running, stopping or gone: removal settles it
            self.client.api.stop(name, timeout=max(0, round(self.stop_grace_s)))
        try:
            self.client.api.remove_container(name, force=True, v=True)
        except APIError as exc:
            # 409: removal already in progress; anything else matters only if it is still there
            if exc.status_code != 409 and listed(self.client, exact_name_filter(name)):
                raise ProviderError(f"cannot remove {name}: {exc}") from exc
        wait_removed(self.client, name)

    async def _stop(self, handle: ServerHandle) -> None:
        await self._call(self._remove_sync, handle.id)

    async def _logs(self, handle: ServerHandle) -> str:
        from docker.errors import NotFound

        def read() -> str:
            try:
                raw = self.client.containers.get(handle.id).logs(stdout=True, stderr=True)
            except NotFound:
                return ""
            return bytes(raw).decode("utf-8", errors="replace")

        return await self._call(read)

    def _status(self, name: str) -> str:
        found = listed(self.client, exact_name_filter(name))
        return str(found[0].get("State") or "unknown") if found else "removed"

    async def wait_healthy(self, handle: ServerHandle, deadline_s: float | None = None) -> None:
        """Wait for `/health`, failing fast (with the logs) when the container exits."""
        loop = asyncio.get_running_loop()
        end = loop.time() + (deadline_s or self.health_deadline_s)
        while True:
            try:
                await wait_healthy(handle.base_url, deadline_s=min(0.5, end - loop.time()))
                return
            except ProviderError as exc:
                status = await self._call(self._status, handle.id)
                if status in ("exited", "dead", "removed"):
                    logs = (await self.logs(handle))[-2000:]
                    msg = f"{handle.id} {status} before healthy; logs:\n{logs}"
                    raise ProviderError(msg) from exc
                if loop.time() >= end:
                    raise

    async def aclose(self) -> None:
        try:
            handles = list(self._handles.values())
            await asyncio.gather(*(self.stop(h) for h in handles))
        finally:
            if self._client is not None:
                self._client.close()
                self._client = None
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None
            if self._reaper is not None:  # it checks the run is empty and exits
                self._reaper.close()
                self._reaper = None
