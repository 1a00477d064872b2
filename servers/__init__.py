"""mcpgym.servers: host an environment as a Starlette app (simulation or production mode).

Names are imported lazily so `mcpgym --help` starts fast.

Example:
    >>> from mcpgym.servers import create_app
    >>> from mcpgym.examples.guess import GuessEnv
    >>> app = create_app(GuessEnv)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgym.servers.app import EnvInfo, create_app
    from mcpgym.servers.dispatch import Dispatcher
    from mcpgym.servers.factory import load_target, make_factory
    from mcpgym.servers.sessions import Session, SessionManager
    from mcpgym.servers.settings import ServerSettings

__all__ = [
    "Dispatcher",
    "EnvInfo",
    "ServerSettings",
    "Session",
    "SessionManager",
    "create_app",
    "load_target",
    "make_factory",
]

_WHERE = {
    "Dispatcher": "dispatch",
    "EnvInfo": "app",
    "ServerSettings": "settings",
    "Session": "sessions",
    "SessionManager": "sessions",
    "create_app": "app",
    "load_target": "factory",
    "make_factory": "factory",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgym.servers' has no attribute {name!r}")
    return getattr(importlib.import_module(f"mcpgym.servers.{module}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
