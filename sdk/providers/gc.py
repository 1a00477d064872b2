"""Remove what dead runs left (`mcpgym providers gc`): containers, networks and volumes on a
container engine (`collect`), and servers the process provider started (`collect_processes`).

Everything a provider creates carries `io.mcpgym.managed=1`, its run id, its owner's pid and host
name (a process carries them in its `MCPGYM_LABELS` environment). A resource is garbage when its
owner ran on this host and that process is gone (or is a zombie), or when its run is named
explicitly. Resources of owners on other hosts are never judged from here.

Example:
    >>> owner_alive(os.getpid())
    True
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
from collections.abc import Mapping
from typing import Any

from mcpgym.providers._engine import connect, listed, wait_removed
from mcpgym.providers.base import LABEL_MANAGED, LABEL_OWNER_PID, LABEL_RUN
from mcpgym.providers.docker import LABEL_OWNER_HOST
from mcpgym.providers.process import labelled_processes
from mcpgym.providers.reaper import wait_for_owner
from mcpgym.runtime.proctree import kill_family

__all__ = ["collect", "collect_processes", "is_garbage", "main", "owner_alive"]


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
    from docker.errors import APIError, NotFound

    client: Any = connect(engine)
    managed = {"label": f"{LABEL_MANAGED}=1"}
    removed: list[str] = []
    try:
        for container in listed(client, managed):
            labels = container.get("Labels") or {}
            if not is_garbage(labels, run=run):
                continue
            name = str((container.get("Names") or [container["Id"]])[0]).lstrip("/")
            removed.append(f"container {name} (run {labels.get(LABEL_RUN)})")
            if not dry_run:
                # Gone already (another collector, its own reaper) is fine: the listing decides.
                with contextlib.suppress(APIError):
                    client.api.remove_container(container["Id"], force=True, v=True)
                wait_removed(client, name)
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


def collect_processes(*, run: str | None = None, dry_run: bool = False) -> list[str]:
    """Stop the provider-started servers of dead runs (each with its whole family: a server
    leads its own process group); returns `process PID (run id)` lines."""
    removed: list[str] = []
    for found in labelled_processes():
        if found.pid == os.getpid() or not is_garbage(found.labels, run=run):
            continue
        removed.append(f"process {found.pid} (run {found.labels.get(LABEL_RUN)})")
        if not dry_run:
            kill_family(found.pid)
    return removed


def main(argv: list[str] | None = None) -> int:
    """`python -m mcpgym.providers.gc --reap RUN`: a provider's reaper (`mcpgym.providers.reaper`):
    wait until the owner closes the pipe on stdin or dies, then collect the run."""
    parser = argparse.ArgumentParser(prog="python -m mcpgym.providers.gc")
    parser.add_argument("--reap", required=True, metavar="RUN", help="the provider's run id")
    parser.add_argument("--engine", help="Docker API URL (default $DOCKER_HOST)")
    args = parser.parse_args(argv)
    wait_for_owner()
    try:
        collect(engine=args.engine, run=args.reap)
    except Exception as exc:  # the engine is gone too: `mcpgym providers gc` is the fallback
        print(f"mcpgym reaper: could not collect run {args.reap}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
