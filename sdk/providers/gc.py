"""Remove what dead runs left on a container engine (`mcpgym providers gc`).

Everything a provider creates carries `io.mcpgym.managed=1`, its run id, its owner's pid and host
name. A resource is garbage when its owner ran on this host and that process is gone (or is a
zombie), or when its run is named explicitly. Resources of owners on other hosts are never
judged from here.

Example:
    >>> owner_alive(os.getpid())
    True
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Mapping
from typing import Any

from mcpgym.providers._engine import connect, wait_removed
from mcpgym.providers.base import LABEL_MANAGED, LABEL_OWNER_PID, LABEL_RUN
from mcpgym.providers.docker import LABEL_OWNER_HOST

__all__ = ["collect", "is_garbage", "owner_alive"]


def owner_alive(pid: int) -> bool:
    """Whether process `pid` runs on this host (a zombie counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def is_garbage(labels: Mapping[str, str], *, run: str | None = None) -> bool:
    """Whether a resource with these labels belongs to a dead run on this host (or to `run`)."""
    if labels.get(LABEL_MANAGED) != "1":
        return False
    if run is not None:
        return labels.get(LABEL_RUN) == run
    if labels.get(LABEL_OWNER_HOST, socket.gethostname()) != socket.gethostname():
        return False
    try:
        pid = int(labels.get(LABEL_OWNER_PID, ""))
    except ValueError:
        return False
    return not owner_alive(pid)


def collect(
    *, engine: str | None = None, run: str | None = None, dry_run: bool = False
) -> list[str]:
    """Remove the containers, then networks and volumes, of dead runs; returns what it removed
    (or would remove, with `dry_run`) as `kind name (run id)` lines."""
    from docker.errors import NotFound

    client: Any = connect(engine)
    managed = {"label": f"{LABEL_MANAGED}=1"}
    removed: list[str] = []
    try:
        for container in client.containers.list(all=True, filters=managed):
            labels = container.labels or {}
            if not is_garbage(labels, run=run):
                continue
            removed.append(f"container {container.name} (run {labels.get(LABEL_RUN)})")
            if not dry_run:
                with contextlib.suppress(NotFound):
                    container.remove(force=True, v=True)
                wait_removed(client, container.name)
        for kind, items in (
            ("network", client.networks.list(filters=managed)),
            ("volume", client.volumes.list(filters=managed)),
        ):
            for item in items:
                labels = item.attrs.get("Labels") or {}
                if not is_garbage(labels, run=run):
                    continue
                removed.append(f"{kind} {item.name} (run {labels.get(LABEL_RUN)})")
                if not dry_run:
                    with contextlib.suppress(NotFound):
                        item.remove()
    finally:
        client.close()
    return removed
