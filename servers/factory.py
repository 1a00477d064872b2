"""Turn what a user names (`module:attr`, a class, a callable) into an environment factory."""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpgym.env import Environment
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.tools import Mode

__all__ = ["EnvFactory", "load_target", "make_factory"]

EnvFactory = Callable[[], Environment[Any, Any, Any]]


def load_target(spec: str) -> Any:
    """Import `module:attr` (the current directory is importable, as for `python -m`).

    Raises `ValueError` with a message a CLI user can act on.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(
            f"expected MODULE:ATTR (e.g. mcpgym.examples.guess:GuessEnv), got {spec!r}"
        )
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {module_name!r}: {exc}") from exc
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from None
    return obj


def make_factory(target: Any, mode: Mode = "simulation") -> tuple[EnvFactory, type | None]:
    """A zero-argument factory for `target` (an Environment class or a callable returning one).

    The factory sets `serving_mode` on MCP environments. Returns the factory and, when known
    without building an instance, the environment class.
    """
    env_cls: type | None = target if inspect.isclass(target) else None
    if env_cls is not None and not issubclass(env_cls, Environment):
        raise ValueError(f"{env_cls.__qualname__} is not an mcpgym Environment subclass")
    if env_cls is None and not callable(target):
        raise ValueError(f"{target!r} is neither an Environment class nor a factory")

    def factory() -> Environment[Any, Any, Any]:
        env = target()
        if not isinstance(env, Environment):
            raise TypeError(f"factory returned {type(env).__name__}, not an Environment")
        if isinstance(env, MCPEnvironment):
            env.serving_mode = mode
        return env

    return factory, env_cls
