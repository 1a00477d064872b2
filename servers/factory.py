"""Turn what a user names (`module:attr`, a class, a callable) into an environment factory."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from mcpgym.env import Environment
from mcpgym.manifest.registry import GROUP, environment_entry
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.targets import TargetError, describe_exception, import_target
from mcpgym.tools import Mode

__all__ = [
    "EnvFactory",
    "StartupFailure",
    "load_target",
    "make_factory",
    "probe_target",
    "untyped_warnings",
]

EnvFactory = Callable[[], Environment[Any, Any, Any]]


def load_target(spec: str) -> Any:
    """Import what a user names: `MODULE:ATTR`, or the name of an installed environment
    (`mcpgym list`), by the rule every command shares (`mcpgym.targets`: the current folder is
    importable, as for `python -m`).

    Raises `ValueError` (a `TargetError`) with one line a CLI user can act on.
    """
    if ":" not in spec:
        found = environment_entry(spec)
        if found is None:
            known = ", ".join(sorted(e.name for e in entry_points(group=GROUP))) or "none"
            raise TargetError(
                f"expected MODULE:ATTR or an installed environment's name (installed: {known}), "
                f"got {spec!r}; fix: name the class as module:ClassName, e.g. my_env:MyEnv"
            )
        spec = found
    return import_target(spec)


def make_factory(
    target: Any, mode: Mode = "simulation", max_result_bytes: int | None = None
) -> tuple[EnvFactory, type | None]:
    """A zero-argument factory for `target` (an Environment class or a callable returning one).

    The factory sets `serving_mode` and `max_result_bytes` on MCP environments. Returns the
    factory and, when known without building an instance, the environment class.
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
            env.max_result_bytes = max_result_bytes
        return env

    return factory, env_cls


class StartupFailure(RuntimeError):
    """The environment could not be built: its message is one line ending in a fix."""


def _named(target: Any) -> str:
    return getattr(target, "__qualname__", None) or type(target).__name__


def probe_target(target: Any, mode: Mode = "simulation") -> None:
    """Build one instance of `target` and close it, as a server does before serving.

    Raises `ValueError` when `target` is not an environment (class or factory) and
    `StartupFailure` when building or closing it raises: one line naming the file and line.
    """
    make_factory(target, mode)  # ValueError: neither an Environment class nor a callable
    try:
        env = target()
    except Exception as exc:
        raise StartupFailure(
            f"{_named(target)}() raised {describe_exception(exc)}; fix: the environment must "
            "build with no arguments (`--debug` shows the traceback)"
        ) from exc
    if not isinstance(env, Environment):
        raise ValueError(
            f"{_named(target)}() returned {type(env).__name__}, not an Environment; fix: name an "
            "Environment subclass (or a function returning an instance) as MODULE:ATTR"
        )
    step = "reset"
    try:
        if mode == "production":  # a production server resets its live instance at start-up
            _finish(env.reset())
        step = "close"
        _finish(env.close())
    except Exception as exc:
        raise StartupFailure(
            f"{type(env).__name__}.{step}() raised {describe_exception(exc)}; fix: {step}() "
            "must succeed with no options (`--debug` shows the traceback)"
        ) from exc


def _finish(result: Any) -> None:
    """Wait for `result` when an async method returned it."""
    if inspect.isawaitable(result):
        asyncio.run(_wait(result))


async def _wait(awaitable: Any) -> None:
    await awaitable


def untyped_warnings(target: Any) -> list[str]:
    """One line per tool of `target`'s class with arguments that have no type hint."""
    specs: dict[str, Any] = getattr(target, "tool_specs", {}) if inspect.isclass(target) else {}
    lines = []
    for spec in specs.values():
        untyped = getattr(spec, "untyped_args", ())
        if untyped:
            lines.append(
                f"{spec.where}: tool {spec.name!r}: argument{'s' if len(untyped) > 1 else ''} "
                f"{', '.join(untyped)} ha{'ve' if len(untyped) > 1 else 's'} no type hint, so "
                f"the agent is told any JSON will do; fix: annotate (e.g. {untyped[0]}: str)"
            )
    return lines
