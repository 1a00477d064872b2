"""`Environment`, the Gymnasium-style episode contract every mcpgym environment implements.

Authors write `reset`, `step`, `state` (and optionally `close`) as plain or `async` methods; the
framework calls them through `areset` / `astep` / `aclose`, which await async methods, run blocking
sync methods in a worker thread (or inline when the class sets `blocking = False`), enforce the
step timeout, and never let two calls of one instance overlap.

Example:
    >>> from mcpgym import Action, Environment, Observation, State
    >>> class Count(Action):
    ...     by: int = 1
    >>> class Counter(Environment[Count, Observation, State]):
    ...     action_type = Count
    ...     def __init__(self):
    ...         self._state = State()
    ...     def reset(self, seed=None, episode_id=None, **kwargs):
    ...         self._state = State(episode_id=episode_id)
    ...         return Observation()
    ...     def step(self, action, timeout_s=None, **kwargs):
    ...         self._state.step_count += action.by
    ...         return Observation(reward=1.0, done=self._state.step_count >= 3)
    ...     @property
    ...     def state(self):
    ...         return self._state
    >>> env = Counter(); _ = env.reset()
    >>> env.step(Count(by=3)).done
    True
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from mcpgym.errors import ExecutionError, InvalidRequest, MCPGymError, StepTimeout
from mcpgym.tools import validation_errors
from mcpgym.types import Action, Observation, State

__all__ = ["ActT", "Environment", "EnvironmentMetadata", "ObsT", "StateT"]

ActT = TypeVar("ActT", bound=Action)
ObsT = TypeVar("ObsT", bound=Observation)
StateT = TypeVar("StateT", bound=State)
_T = TypeVar("_T")


class EnvironmentMetadata(BaseModel):
    """What `GET /metadata` reports about an environment."""

    name: str
    description: str = ""
    version: str = "0.0.0"
    mode: str = "simulation"
    action_type: str = ""
    observation_type: str = ""
    tools: list[str] = []


class Environment(Generic[ActT, ObsT, StateT]):
    """Base class of every environment.

    Class attributes (set in SOME subclasses):
        action_type: the `Action` model `step` accepts (default `Action`).
        observation_type: the `Observation` model `step` returns (for schemas and clients).
        state_type: the `State` model `state` returns.
        blocking: `True` (default) runs sync methods in a worker thread so a slow environment never
            stalls the server; set `False` for cheap, CPU-light sync environments.
        description / version: shown by `/metadata`.

    Methods (implement in ALL subclasses): `reset`, `step`, `state`; `close` is optional.
    """

    action_type: ClassVar[type[Action]] = Action
    observation_type: ClassVar[type[Observation]] = Observation
    state_type: ClassVar[type[State]] = State
    blocking: ClassVar[bool] = True
    description: ClassVar[str] = ""
    version: ClassVar[str] = "0.0.0"

    _inflight: asyncio.Future[Any] | None = None
    _action_adapter: ClassVar[TypeAdapter[Any] | None] = None

    # -- the contract authors implement ----------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> ObsT | Awaitable[ObsT]:
        """Start a new episode and return the first observation."""
        raise NotImplementedError(f"{type(self).__name__} must implement reset()")

    def step(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT | Awaitable[ObsT]:
        """Apply one action and return the next observation (with `reward` and `done`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    @property
    def state(self) -> StateT:
        """The episode's bookkeeping (`episode_id`, `step_count`, …)."""
        raise NotImplementedError(f"{type(self).__name__} must implement the state property")

    def close(self) -> None | Awaitable[None]:
        """Release resources; called once when the session ends."""
        return None

    # -- what the framework calls ----------------------------------------------------------------

    def parse_action(self, data: Any) -> ActT:
        """Validate a wire action (a dict) into this environment's action model.

        Raises `InvalidRequest` listing every problem.
        """
        adapter = type(self)._action_adapter
        if adapter is None:
            adapter = TypeAdapter(self.action_type)
            type(self)._action_adapter = adapter
        if not isinstance(data, Mapping):
            raise InvalidRequest("action must be a JSON object", errors=[{"field": "action", "got": data}])
        try:
            return adapter.validate_python(data)
        except PydanticValidationError as exc:
            errors = validation_errors(exc)
            raise InvalidRequest(
                f"invalid action: {errors[0]['field']}: {errors[0]['message']}", errors=errors
            ) from None

    def metadata(self) -> EnvironmentMetadata:
        """Describe this environment for `/metadata`."""
        return EnvironmentMetadata(
            name=type(self).__name__,
            description=self.description or (inspect.getdoc(type(self)) or "").split("\n\n")[0],
            version=self.version,
            action_type=self.action_type.__name__,
            observation_type=self.observation_type.__name__,
        )

    async def areset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ObsT:
        """`reset` for async callers."""
        return await self._serialized(self.reset, None, seed=seed, episode_id=episode_id, **kwargs)

    async def astep(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        """`step` for async callers; raises `StepTimeout` after `timeout_s` seconds."""
        return await self._serialized(self.step, timeout_s, action, timeout_s=timeout_s, **kwargs)

    async def aclose(self) -> None:
        """`close` for async callers; waits for a call still running in a worker thread."""
        await self._serialized(self.close, None)

    async def _serialized(
        self, method: Callable[..., Any], timeout_s: float | None, *args: Any, **kwargs: Any
    ) -> Any:
        """Run one contract method, never overlapping a previous call that is still running.

        A timed-out sync call keeps running in its thread (threads cannot be cancelled); the next
        call waits for it so the environment is never entered twice at once.
        """
        prev = self._inflight
        if prev is not None and not prev.done():
            await asyncio.wait([prev])
        fut: asyncio.Future[Any] = asyncio.ensure_future(self._invoke(method, *args, **kwargs))
        self._inflight = fut
        try:
            if timeout_s is None:
                return await asyncio.shield(fut)
            done, _ = await asyncio.wait([fut], timeout=timeout_s)
            if not done:
                raise StepTimeout(f"step did not finish within {timeout_s} s", timeout_s=timeout_s)
            return fut.result()
        except asyncio.CancelledError:
            fut.cancel()
            raise

    async def _invoke(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            if inspect.iscoroutinefunction(method):
                return await method(*args, **kwargs)
            if self.blocking:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(None, functools.partial(method, *args, **kwargs))
            else:
                result = method(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result
        except MCPGymError:
            raise
        except Exception as exc:
            raise ExecutionError(
                f"{type(self).__name__}.{getattr(method, '__name__', 'call')} raised "
                f"{type(exc).__name__}: {exc}",
                exception=type(exc).__name__,
            ) from exc
