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
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from mcpgym.errors import ExecutionError, InvalidRequest, MCPGymError, StepTimeout
from mcpgym.runtime import crashes
from mcpgym.runtime.execution import (
    awaitable,
    busy_error,
    call_inline,
    check_inline,
    is_coroutine_function,
    is_demoted,
    run_async,
    run_in_pool,
    run_inline,
    timeout_note,
)
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
        blocking: `True` (default) runs sync methods in the shared worker pool, so a slow or hung
            environment never stalls the server and `timeout_s` is kept. `False` is the author's
            promise that every sync call returns within a few milliseconds: it runs inline on the
            event loop (no thread hop); a call that overran its timeout is answered as timed out,
            and a method that held the loop beyond `inline_budget_s` runs in the pool from then
            on (see docs/security.md).
        inline_budget_s: with `blocking = False`, how long one inline call may hold the event loop
            before that method is moved to the pool (default 0.02 s; `None`: never, the author
            accepts that a slow call stalls every session).
        description / version: shown by `/metadata`.

    Methods (implement in ALL subclasses): `reset`, `step`, `state`; `close` is optional.
    """

    action_type: ClassVar[type[Action]] = Action
    observation_type: ClassVar[type[Observation]] = Observation
    state_type: ClassVar[type[State]] = State
    blocking: ClassVar[bool] = True
    inline_budget_s: ClassVar[float | None] = 0.02
    description: ClassVar[str] = ""
    version: ClassVar[str] = "0.0.0"

    _action_adapter: ClassVar[TypeAdapter[Any] | None] = None

    # -- the contract authors implement ----------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> ObsT | Awaitable[ObsT]:
        """Start a new episode and return the first observation."""
        raise NotImplementedError(f"{type(self).__name__} must implement reset()")

    def step(
        self, action: ActT, timeout_s: float | None = None, **kwargs: Any
    ) -> ObsT | Awaitable[ObsT]:
        """Apply one action and return the next observation (with `reward` and `done`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    @property
    def state(self) -> StateT:
        """The episode's bookkeeping (`episode_id`, `step_count`, …)."""
        raise NotImplementedError(f"{type(self).__name__} must implement the state property")

    def close(self) -> Awaitable[None] | None:
        """Release resources; called once when the session ends."""
        return None

    # -- what the framework calls ----------------------------------------------------------------

    def parse_action(self, data: Any) -> ActT:
        """Validate a wire action (a dict) into this environment's action model.

        Raises `InvalidRequest` listing every problem.
        """
        cls = type(self)
        adapter = cls.__dict__.get("_action_adapter")  # per class: subclasses differ in action_type
        if adapter is None:
            adapter = TypeAdapter(self.action_type)
            cls._action_adapter = adapter
        if not isinstance(data, Mapping):
            raise InvalidRequest(
                "action must be a JSON object", errors=[{"field": "action", "got": data}]
            )
        try:
            return cast(ActT, adapter.validate_python(data))
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

    async def areset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> ObsT:
        """`reset` for async callers."""
        return await self._contract_call(
            self.reset, None, seed=seed, episode_id=episode_id, **kwargs
        )

    async def astep(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        """`step` for async callers; raises `StepTimeout` after `timeout_s` seconds."""
        return await self._contract_call(
            self.step, timeout_s, action, timeout_s=timeout_s, **kwargs
        )

    async def aclose(self) -> None:
        """`close` for async callers; waits for a call still running in a worker thread."""
        await self._contract_call(self.close, None, _wait_if_busy=True)

    async def _contract_call(
        self,
        method: Callable[..., Any],
        deadline: float | None,
        /,
        *args: Any,
        _wait_if_busy: bool = False,
        **kwargs: Any,
    ) -> Any:
        try:
            return await self._exclusive(method, args, kwargs, deadline, _wait_if_busy)
        except TimeoutError as exc:
            detail = dict(exc.args[0]) if exc.args and isinstance(exc.args[0], dict) else {}
            raise StepTimeout(
                f"step did not finish within {deadline} s{timeout_note(detail)}",
                timeout_s=deadline,
                **detail,
            ) from None
        except MCPGymError:
            raise
        except Exception as exc:
            call = f"{type(self).__name__}.{getattr(method, '__name__', 'call')}"
            raise ExecutionError(
                f"{call} raised {type(exc).__name__}: {exc}",
                exception=type(exc).__name__,
                **crashes.record(self, call, exc),
            ) from exc

    def _call_lock(self) -> asyncio.Lock:
        lock: asyncio.Lock | None = self.__dict__.get("_mcpgym_lock")
        if lock is None:
            lock = self.__dict__["_mcpgym_lock"] = asyncio.Lock()
        return lock

    @property
    def overdue_call(self) -> dict[str, Any] | None:
        """`{"call", "timeout_s", "overdue_s"}` while a timed-out sync call runs, else None."""
        overdue: dict[str, Any] | None = self.__dict__.get("_mcpgym_overdue")
        if overdue is None:
            return None
        return {**overdue, "overdue_s": round(time.monotonic() - overdue["since"], 3)}

    async def _exclusive(
        self,
        method: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        timeout_s: float | None,
        wait_if_busy: bool = False,
    ) -> Any:
        """Run one method of this instance, never overlapping another call of the same instance.

        See `mcpgym.runtime.execution` for where each kind of method runs and how timeouts are kept.
        Raises `TimeoutError` on timeout, `InstanceBusy` while a timed-out call still runs
        (unless `wait_if_busy`: `close` waits for it), and whatever the method raised otherwise.
        """
        if not wait_if_busy and "_mcpgym_overdue" in self.__dict__:
            raise busy_error(self)
        lock: asyncio.Lock | None = self.__dict__.get("_mcpgym_lock")
        if lock is None:
            lock = self._call_lock()
        if is_coroutine_function(method):
            await lock.acquire()
            return await run_async(lock, method, args, kwargs, timeout_s)
        if self.blocking or is_demoted(type(self), method):
            await lock.acquire()
            return await run_in_pool(self, lock, method, args, kwargs, timeout_s)
        if lock.locked():  # another call of this instance is running: wait for it
            await lock.acquire()
            return await run_inline(self, lock, method, args, kwargs, timeout_s)
        # The hot path: nothing of this instance runs and a sync call does not yield, so it
        # cannot overlap another; the lock is taken only if it returns an awaitable.
        result, held = call_inline(method, args, kwargs)
        if awaitable(result):
            async with lock:
                result = await result
        check_inline(self, method, held, timeout_s)
        return result
