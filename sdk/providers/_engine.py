"""Connecting to a container engine (Docker, or Podman's Docker-compatible socket) with the
`docker` SDK.

The SDK is an optional dependency (`pip install 'mcpgym[docker]'`); importing this module without
it works, calling `connect` raises a `ProviderError` that says what to install.
"""

from __future__ import annotations

import os
import time
from typing import Any

from mcpgym.providers.base import ProviderError

__all__ = ["connect", "engine_name", "exact_name_filter", "listed", "wait_removed"]


def connect(base_url: str | None = None, *, timeout: float = 60.0) -> Any:
    """A `docker.DockerClient` for `base_url` (default `$DOCKER_HOST`, else the system socket).

    The API version is negotiated (`version="auto"`): Debian's engine speaks 1.41, the SDK's
    default is newer, and Podman reports its own.
    """
    try:
        import docker
        from docker.errors import DockerException
    except ImportError as exc:
        raise ProviderError(
            "container providers need the docker SDK: pip install 'mcpgym[docker]'"
        ) from exc
    url = base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if url.startswith("unix://") and not os.path.exists(url.removeprefix("unix://")):
        # Checked here: the SDK leaks its socket when a version probe fails to connect.
        raise ProviderError(f"no container engine answers at {url}: no such socket")
    try:
        client = docker.DockerClient(
            base_url=url, version="auto", timeout=int(timeout), max_pool_size=32
        )
    except DockerException as exc:
        raise ProviderError(f"no container engine answers at {url}: {exc}") from None
    return client


def engine_name(client: Any) -> str:
    """`"podman"` or `"docker"`, from the engine's own version report."""
    components = client.version().get("Components") or []
    names = " ".join(str(c.get("Name", "")) for c in components).lower()
    return "podman" if "podman" in names else "docker"


def exact_name_filter(name: str) -> dict[str, str]:
    """A list filter matching exactly one container name on both engines.

    Docker matches the regex against `/NAME`, Podman against `NAME`; `^/?NAME$` fits both.
    """
    return {"name": f"^/?{name}$"}


def listed(client: Any, filters: dict[str, str]) -> list[dict[str, Any]]:
    """The engine's summaries (`Id`, `Names`, `Labels`, `State`) of every container matching
    `filters`, stopped ones included.

    Not `client.containers.list`: it inspects each listed container in turn, and a container
    removed between the list and its inspect fails the whole call (Docker answers 404, which the
    SDK can skip; Podman answers 500 "no such container", which it cannot).
    """
    return list(client.api.containers(all=True, filters=filters))


def wait_removed(client: Any, name: str, *, deadline_s: float = 10.0) -> None:
    """Return once no container named `name` is listed (removal verified by listing, never by
    matching an error text, which differs between engines)."""
    end = time.monotonic() + deadline_s
    while listed(client, exact_name_filter(name)):
        if time.monotonic() >= end:
            raise ProviderError(f"container {name} still listed {deadline_s:.0f}s after removal")
        time.sleep(0.05)
