"""mcpgym.servers: host an environment as a Starlette app (simulation or production mode).

Example:
    >>> from mcpgym.servers import create_app
    >>> from mcpgym.examples.guess import GuessEnv
    >>> app = create_app(GuessEnv)
"""

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
