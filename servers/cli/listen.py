"""Where `mcpgym serve` listens: the socket is bound before anything is printed, so the
start-up line is true when it appears, and a taken port is one line with the fix.

`bind` opens the listening socket as uvicorn would; `bind_problem` turns its `OSError` into one
line; `BoundServer` is uvicorn serving that socket.
"""

from __future__ import annotations

import errno
import logging
import socket

import uvicorn

__all__ = ["BoundServer", "bind", "bind_problem"]


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port` (`0`: a free port), as uvicorn would open it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def bind_problem(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} is already in use on {host}; fix: pass --port 0 (a free port, named "
            "in the start-up line) or stop the other server"
        )
    if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or isinstance(exc, socket.gaierror):
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}; fix: pass --host 127.0.0.1"
    if exc.errno == errno.EACCES:
        return f"no permission to listen on port {port}; fix: use a port above 1023, or --port 0"
    return f"cannot listen on {host}:{port}: {exc}"


class BoundServer(uvicorn.Server):
    """uvicorn on the socket the CLI bound. Given sockets, uvicorn logs no "Uvicorn running on"
    line; its tools (validate's LocalServer, the process provider, the demo) read that line, so
    it is logged here, in uvicorn's words, once the application has started."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if sockets and self.started:
            host, port = self.config.host, sockets[0].getsockname()[1]
            shown = f"[{host}]" if ":" in host else host
            logging.getLogger("uvicorn.error").info(
                "Uvicorn running on http://%s:%d (Press CTRL+C to quit)", shown, port
            )
