"""`PodmanProvider`: the Docker provider over Podman's Docker-compatible socket.

Podman differs where it matters here, and this class handles it:

- a forced removal of a running container waits for the container's stop timeout (default
  10 s) before killing it, so containers are created with a stop timeout of 0: a crash clean-up
  (`rm --force`, `mcpgym providers gc`) is instant, while `stop` still gives the server its
  SIGTERM grace (`stop_grace_s`) through an explicit stop first;
- `inspect` reports dropped capabilities one by one instead of `["ALL"]`: check the bounding set
  of the process (`CapBnd`), which is empty on both engines;
- error texts differ from Docker's; nothing here matches on them (removal is verified by listing).

Start the service with `bash .ci/podman-engine.sh` (`podman system service` on a socket).

Example:
    >>> PodmanProvider("mcpgym-guess:latest", engine="unix:///tmp/p.sock").kind
    'podman'
"""

from __future__ import annotations

import os
from typing import Any

from mcpgym.providers.docker import DockerProvider

__all__ = ["DEFAULT_PODMAN_SOCKET", "PodmanProvider"]

DEFAULT_PODMAN_SOCKET = "unix:///run/podman/podman.sock"


class PodmanProvider(DockerProvider):
    """`DockerProvider` on Podman; `engine` defaults to `$MCPGYM_PODMAN_HOST`, then the rootful
    socket `/run/podman/podman.sock`."""

    kind = "podman"
    create_stop_timeout = 0

    def __init__(self, image: str, *, engine: str | None = None, **kwargs: Any) -> None:
        engine = engine or os.environ.get("MCPGYM_PODMAN_HOST") or DEFAULT_PODMAN_SOCKET
        super().__init__(image, engine=engine, **kwargs)
