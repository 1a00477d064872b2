"""Clients of an environment server's WebSocket session endpoint (`/ws`).

`EnvClient` (asyncio) and `SyncEnvClient` (blocking) are twins over one I/O-free `ClientCore`,
the one place the wire protocol is written down; `GenericEnvClient` and `SyncGenericEnvClient`
speak plain dicts for environments whose models cannot be imported. Every call returns one
concrete type and raises `RemoteError`, `RequestTimeout` or `ServerGone` (all `ClientError`).

Example:
    >>> from mcpgym.client import SyncEnvClient
    >>> SyncEnvClient("http://127.0.0.1:8000").url
    'ws://127.0.0.1:8000/ws'
"""

from mcpgym.client._async import EnvClient
from mcpgym.client._core import (
    DEFAULT_MAX_SIZE,
    DEFAULT_TIMEOUT,
    ClientCore,
    Request,
)
from mcpgym.client._sync import SyncEnvClient
from mcpgym.client._url import normalize_url
from mcpgym.client.generic import GenericEnvClient, SyncGenericEnvClient

__all__ = [
    "DEFAULT_MAX_SIZE",
    "DEFAULT_TIMEOUT",
    "ClientCore",
    "EnvClient",
    "GenericEnvClient",
    "Request",
    "SyncEnvClient",
    "SyncGenericEnvClient",
    "normalize_url",
]
