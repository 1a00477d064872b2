"""Serve an environment from a background thread of this process.

For hosts that are themselves a process someone else manages — a Ray actor, a notebook, a test:
`BackgroundServer` binds its socket first (port 0: the OS picks a free port, so the port is
known before serving and cannot be raced for), then runs uvicorn with the same settings as
`mcpgym serve` on a daemon thread, and stops through uvicorn's `should_exit`.

Example:
    >>> server = BackgroundServer("mcpgym.examples.guess:GuessEnv").start()
    >>> server.url.startswith("http://127.0.0.1:")
    True
    >>> server.stop()
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Self

import uvicorn

from mcpgym.servers.app import create_app
from mcpgym.servers.factory import load_target
from mcpgym.servers.settings import ServerSettings

__all__ = ["BackgroundServer"]


class BackgroundServer:
    """`target` (`MODULE:ATTR`, a class or a factory) served on `host:port` from a thread.

    `settings` are `ServerSettings` fields (`max_sessions`, `mode`, …).
    """

    def __init__(
        self, target: Any, *, host: str = "127.0.0.1", port: int = 0, **settings: Any
    ) -> None:
        self.target = load_target(target) if isinstance(target, str) else target
        self.host = host
        self.settings = ServerSettings(**settings)
        self._sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.port: int = self._sock.getsockname()[1]
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL (the bound address; a wildcard host is reported as 127.0.0.1)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}"

    def start(self, deadline_s: float = 30.0) -> Self:
        """Start serving; return once uvicorn has started (or raise `RuntimeError`)."""
        s = self.settings
        app = create_app(self.target, mode=s.mode, settings=s)
        config = uvicorn.Config(
            app,
            log_level="warning",
            ws_max_size=s.max_frame_bytes * 2,
            ws_per_message_deflate=False,
            ws_ping_interval=20.0,
            ws_ping_timeout=20.0,
            timeout_graceful_shutdown=5,
        )
        server = self._server = uvicorn.Server(config)
        thread = self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self._sock]}, daemon=True,
            name=f"mcpgym-server-{self.port}",
        )  # fmt: skip
        thread.start()
        end = time.monotonic() + deadline_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > end:
                self.stop()
                raise RuntimeError(f"the server on port {self.port} did not start")
            time.sleep(0.01)  # uvicorn sets `started` from its own thread
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and close the socket. Idempotent."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._sock.close()
