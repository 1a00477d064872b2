"""Providers start environment servers somewhere (a process, a container, a cluster) and return
their base URLs; see `mcpgym.providers.base` for the contract."""

from mcpgym.providers.base import (
    LABEL_KIND,
    LABEL_MANAGED,
    LABEL_OWNER_PID,
    LABEL_RUN,
    Provider,
    ProviderError,
    ServerHandle,
    SyncProvider,
    new_run_id,
    wait_healthy,
)

__all__ = [
    "LABEL_KIND",
    "LABEL_MANAGED",
    "LABEL_OWNER_PID",
    "LABEL_RUN",
    "Provider",
    "ProviderError",
    "ServerHandle",
    "SyncProvider",
    "new_run_id",
    "wait_healthy",
]
