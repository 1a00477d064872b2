"""`check_env`: catch a malformed environment before a trainer or server meets it.

Each `check_*` function asserts one property and says how to fix it, in the style of Gymnasium's
checker. `check_env` runs them all on a fresh instance and raises `EnvCheckError` listing every
failure (or returns the list of passed check names).

Example:
    >>> from mcpgym import check_env
    >>> from mcpgym.examples.guess import GuessEnv
    >>> "check_reset_returns_observation" in check_env(GuessEnv)
    True
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import Any

from mcpgym.env import Environment
from mcpgym.errors import MCPGymError
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.types import (
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
)

__all__ = ["EnvCheckError", "check_env"]


class EnvCheckError(MCPGymError, AssertionError):
    """One or more checks failed; `failures` maps check name to its message."""

    def __init__(self, failures: dict[str, str]) -> None:
        lines = "\n".join(f"- {k}: {v}" for k, v in failures.items())
        super().__init__(
            f"{len(failures)} environment check(s) failed:\n{lines}", failures=failures
        )
        self.failures = failures


def _run(value: Any) -> Any:
    return asyncio.run(value) if inspect.isawaitable(value) else value  # type: ignore[arg-type]


def check_contract_methods(env: Environment[Any, Any, Any]) -> None:
    """reset, step and state are implemented."""
    cls = type(env)
    for name in ("reset", "step"):
        if getattr(cls, name) is getattr(Environment, name):
            raise AssertionError(f"{cls.__name__}.{name}() is not implemented; override it.")
    if type(env).state is Environment.state:
        raise AssertionError(f"{cls.__name__}.state is not implemented; add a @property.")


def check_reset_returns_observation(env: Environment[Any, Any, Any]) -> None:
    """reset() returns an Observation whose JSON form round-trips."""
    obs = _run(env.reset(seed=0, episode_id="check-env"))
    if not isinstance(obs, Observation):
        raise AssertionError(
            f"reset() returned {type(obs).__name__}; return an Observation (subclass)."
        )
    json.dumps(obs.model_dump(mode="json"))


def check_state(env: Environment[Any, Any, Any]) -> None:
    """state is a State carrying the episode id given to reset()."""
    st = env.state
    if not isinstance(st, State):
        raise AssertionError(f"state returned {type(st).__name__}; return a State (subclass).")
    if st.episode_id != "check-env":
        raise AssertionError(
            f"state.episode_id is {st.episode_id!r} after reset(episode_id='check-env')."
        )


def check_tools(env: Environment[Any, Any, Any]) -> None:
    """An MCPEnvironment lists tools via step(ListToolsAction()); each schema is an object."""
    if not isinstance(env, MCPEnvironment):
        return
    if not env.tool_specs:
        raise AssertionError(
            "the class has no @tool methods; decorate at least one method with @tool."
        )
    before = env.state.step_count
    obs = _run(env.step(ListToolsAction()))
    if not isinstance(obs, ListToolsObservation):
        raise AssertionError("step(ListToolsAction()) must return a ListToolsObservation.")
    if env.state.step_count != before + 1:
        raise AssertionError("step(ListToolsAction()) must count as a step.")
    for t in obs.tools:
        if t.input_schema.get("type") != "object":
            raise AssertionError(f"tool {t.name!r}: input schema must be a JSON object schema.")


def check_unknown_tool_is_data(env: Environment[Any, Any, Any]) -> None:
    """Calling an unknown tool yields a structured error observation, not an exception."""
    if not isinstance(env, MCPEnvironment):
        return
    from mcpgym.types import CallToolAction

    obs = _run(env.step(CallToolAction(tool_name="__no_such_tool__")))
    if not (
        isinstance(obs, CallToolObservation)
        and obs.error
        and obs.error.error_type == "tool_not_found"
    ):
        raise AssertionError("an unknown tool must come back as error_type 'tool_not_found'.")


def check_close(env: Environment[Any, Any, Any]) -> None:
    """close() does not raise."""
    _run(env.close())


CHECKS: list[Callable[[Environment[Any, Any, Any]], None]] = [
    check_contract_methods,
    check_reset_returns_observation,
    check_state,
    check_tools,
    check_unknown_tool_is_data,
    check_close,
]


def check_env(env: Environment[Any, Any, Any] | type[Environment[Any, Any, Any]]) -> list[str]:
    """Run every check on `env` (an instance, or a class instantiated without arguments).

    Returns the names of the checks that passed; raises `EnvCheckError` if any failed.
    """
    instance = env() if isinstance(env, type) else env
    failures: dict[str, str] = {}
    passed: list[str] = []
    for check in CHECKS:
        try:
            check(instance)
        except Exception as exc:
            failures[check.__name__] = (
                f"{exc}" if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
            )
            if check is check_reset_returns_observation:
                break  # nothing after it can run without an episode
        else:
            passed.append(check.__name__)
    if failures:
        raise EnvCheckError(failures)
    return passed
