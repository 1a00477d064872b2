"""A real uvicorn server on 127.0.0.1, in a background thread of the test process.

The listening socket is bound before the server starts (port 0, so no port race), the server
runs with the same uvicorn defaults as `mcpgym serve`, and `/health` is polled with a deadline.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from helpers.wait import wait_until
from mcpgym.servers.guards.limits import uvicorn_options
from mcpgym.servers.settings import ServerSettings


@dataclass
class RunningServer:
    server: uvicorn.Server
    thread: threading.Thread
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def health(self) -> dict[str, Any]:
        response = httpx.get(f"{self.url}/health", timeout=5.0)
        response.raise_for_status()
        return response.json()

    def wait_for_sessions(self, n: int, timeout: float = 10.0) -> None:
        wait_until(
            lambda: self.health()["sessions"] == n, timeout=timeout, what=f"/health sessions == {n}"
        )


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1.0).status_code == 200
    except httpx.TransportError:
        return False


@contextlib.contextmanager
def run_server(app: Any, **config: Any) -> Iterator[RunningServer]:
    """Serve `app` until the block exits; stop through `should_exit` and join the thread."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    settings = {"log_level": "warning", "timeout_graceful_shutdown": 5, "lifespan": "on"}
    app_settings = getattr(getattr(app, "state", None), "settings", None)
    if isinstance(app_settings, ServerSettings):  # the limits `mcpgym serve` enforces
        settings |= uvicorn_options(app_settings)
    settings |= config
    server = uvicorn.Server(uvicorn.Config(app, **settings))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    running = RunningServer(server, thread, port)
    try:
        wait_until(
            lambda: not thread.is_alive() or _healthy(running.url),
            timeout=15.0,
            what="server start-up",
        )
        assert thread.is_alive(), "uvicorn exited during start-up"
        yield running
    finally:
        server.should_exit = True
        thread.join(timeout=15.0)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop within 15 s"
