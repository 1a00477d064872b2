"""`MCPEnvironment`: an environment whose actions are tool calls.

Subclass it, mark methods with `@tool`, and every tool becomes reachable as
`step(CallToolAction(...))` in simulation and as a real MCP tool in production. Each tool call is
one step with a reward: give the class a `rubric` (see `mcpgym.rubrics`; the framework applies it on
every step, `done` included) or override `reward()`, and call `end_episode()` from a tool to finish.

Example:
    >>> from mcpgym import CallToolAction, MCPEnvironment, tool
    >>> class Echo(MCPEnvironment):
    ...     @tool
    ...     def echo(self, text: str) -> str:
    ...         '''Repeat the text.'''
    ...         return text
    >>> env = Echo(); _ = env.reset()
    >>> env.step(CallToolAction(tool_name="echo", arguments={"text": "hi"})).result
    'hi'
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from mcpgym._hints import exception_text
from mcpgym._results import dump_result as _dump
from mcpgym._results import dumping as _dumping
from mcpgym.context import ToolContext, has_context, use_context
from mcpgym.env import Environment, EnvironmentMetadata
from mcpgym.errors import (
    ExecutionError,
    InstanceBusy,
    InvalidRequest,
    SessionError,
    ToolError,
    ToolExecutionError,
    ToolNotFound,
)
from mcpgym.rubrics import Rubric
from mcpgym.rubrics.trace import RubricTrace
from mcpgym.runtime import crashes
from mcpgym.runtime.execution import require_no_running_loop, tool_timeout
from mcpgym.tools import Mode, ToolSpec, collect_tools, validation_errors
from mcpgym.types import (
    Action,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
    ToolErrorInfo,
    mcp_action_adapter,
)

__all__ = ["MCPEnvironment"]


class MCPEnvironment(Environment[ListToolsAction | CallToolAction, Observation, State]):
    """Base class of tool-using environments.

    Class attributes:
        tool_specs: every `@tool` of the class, by name (built once, at class definition).
        rubric: a `Rubric` scoring every step, `done` included (also settable per instance);
            when set it replaces `reward()`. Shared by all instances, so it holds no episode state.

    Instance attributes:
        serving_mode: `"simulation"` (default) or `"production"`; set by the server. Tools tagged
            for the other mode do not exist for this instance.
        max_result_bytes: the largest result (its JSON) a sync tool of a `blocking` class may
            return, checked in the worker thread that ran it (`ResultTooLarge` beyond); set by
            the server from `--max-result-bytes`. `None` (in-process use): no check here.

    Override `reset` (call `super().reset(...)` first) to build the episode's world, and
    `reward(action, observation)` to score each step.
    """

    tool_specs: ClassVar[dict[str, ToolSpec]] = {}
    action_type = ListToolsAction  # informational; parsing uses the discriminated union
    observation_type = Observation
    serving_mode: Mode = "simulation"
    max_result_bytes: int | None = None
    rubric: Rubric | None = None

    _state: State
    _rubric_trace: RubricTrace | None = None
    _done: bool = False
    _ended: bool = False  # a step has already reported `done` (later ones earn nothing)
    _started: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.tool_specs = collect_tools(cls)

    # -- episode contract ------------------------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        """Start an episode: fresh `State`, step count 0. Subclasses call this first."""
        self._state = self.state_type(episode_id=episode_id or uuid.uuid4().hex[:12], step_count=0)
        self._done = self._ended = False
        self._started = True
        self._rubric_trace = RubricTrace()
        return Observation()

    @property
    def state(self) -> State:
        if not self._started:
            return self.state_type()
        return self._state

    def end_episode(self) -> None:
        """Mark the episode as finished; the current step's observation gets `done=True`."""
        self._done = True

    def reward(self, action: Action, observation: Observation) -> float | None:
        """Score one step (override). Default: no reward."""
        return None

    def visible_tools(self) -> list[ToolSpec]:
        """The tools that exist in this instance's serving mode."""
        mode = self.serving_mode
        return [s for s in self.tool_specs.values() if s.visible_in(mode)]

    def get_tool(self, name: str) -> ToolSpec:
        """The visible tool called `name`; `ToolNotFound` (with near names) otherwise."""
        spec = self.tool_specs.get(name)
        if spec is None or not spec.visible_in(self.serving_mode):
            import difflib

            near = difflib.get_close_matches(name, [s.name for s in self.visible_tools()], n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ToolNotFound(f"Unknown tool: {name!r}{hint}", tool=name, suggestions=near)
        return spec

    def parse_action(self, data: Any) -> ListToolsAction | CallToolAction:
        if not isinstance(data, dict):
            raise InvalidRequest("action must be a JSON object", errors=[{"field": "action"}])
        if "type" not in data and "tool_name" in data:
            # CallToolAction's own schema gives `type` a default, and clients that show a model
            # that schema (verifiers' `openenv` taskset) send calls without it
            data = {**data, "type": "call_tool"}
        if data.get("type") == "call_tool":  # the common case: skip the union's dispatch
            try:
                return _validate_call(data)
            except PydanticValidationError:
                pass  # re-validated below for the union's error messages
        try:
            return mcp_action_adapter.validate_python(data)
        except PydanticValidationError as exc:
            errors = validation_errors(exc)
            for e in errors:  # drop the discriminator tag pydantic puts first in the location
                head, _, rest = e["field"].partition(".")
                if head in ("call_tool", "list_tools"):
                    e["field"] = rest or "(root)"
            raise InvalidRequest(
                f"invalid action: {errors[0]['field']}: {errors[0]['message']}", errors=errors
            ) from None

    def metadata(self) -> EnvironmentMetadata:
        meta = super().metadata()
        meta.mode = self.serving_mode
        meta.action_type = "ListToolsAction | CallToolAction"
        meta.tools = [s.name for s in self.visible_tools()]
        return meta

    # -- tool calls --------------------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
    ) -> Any:
        """Validate and run one tool; returns the JSON-able result or raises a `ToolError`.

        Transports (WS/HTTP `step`, `/mcp`, stdio) reach it through `invoke_tool`, which runs
        `call_tool_sync` instead when a class overrides both. Calls of one instance never overlap,
        whichever transport they come from.
        """
        spec = self.tool_specs.get(name)
        if spec is None or (spec.mode is not None and spec.mode != self.serving_mode):
            spec = self.get_tool(name)  # not visible: raises, with near names
        kwargs = spec.validate(arguments)
        method = getattr(self, spec.method)
        dumped = self.blocking and not spec.is_async
        if dumped:  # converted (and measured) in the worker thread, not on the event loop
            method = _dumping(spec, method, self.max_result_bytes)
        try:
            value = await self._exclusive(method, (), kwargs, timeout_s)
        except TimeoutError as exc:
            raise tool_timeout(name, timeout_s, exc) from None
        except (ToolError, InstanceBusy):
            raise
        except Exception as exc:
            raise ToolExecutionError(
                exception_text(exc),
                tool=name,
                **crashes.record(self, f"{type(self).__name__}.{name} (tool)", exc, **crashes.TOOL),
            ) from exc
        return value if dumped else _dump(spec, value)

    def invoke_tool(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None = None
    ) -> Awaitable[Any]:
        """What transports await: `call_tool` under the framework's execution rules.

        A class that overrides both `call_tool` and `call_tool_sync` (to run tools its own way,
        as Calendar Gym does for speed) still gets them: its `call_tool_sync` runs inline when
        `blocking = False` (timed, moved to the pool if it holds the loop), else in the pool,
        and `timeout_s` is kept either way (mcpgym.runtime.execution). Not itself a coroutine: it
        hands over `call_tool`'s, one frame fewer on every call.
        """
        cls = type(self)
        if cls.call_tool is MCPEnvironment.call_tool or (
            cls.call_tool_sync is MCPEnvironment.call_tool_sync
        ):
            return self.call_tool(name, arguments, timeout_s)
        return self._invoke_own(name, arguments, timeout_s)

    async def _invoke_own(
        self, name: str, arguments: dict[str, Any] | None, timeout_s: float | None
    ) -> Any:
        """The class's own `call_tool_sync`, under the execution rules."""

        def run() -> Any:
            return self.call_tool_sync(name, arguments)

        run.__name__ = f"call_tool:{name}"  # inline demotion is per tool
        try:
            return await self._exclusive(run, (), {}, timeout_s)
        except TimeoutError as exc:
            raise tool_timeout(name, timeout_s, exc) from None

    def call_tool_sync(self, name: str, arguments: dict[str, Any] | None) -> Any:
        """`call_tool` for in-process, synchronous use (async tools run in a fresh event loop)."""
        spec = self.get_tool(name)
        kwargs = spec.validate(arguments)
        method = getattr(self, spec.method)
        if spec.is_async:
            require_no_running_loop()
        try:
            value = method(**kwargs)
            if inspect.isawaitable(value):
                value = asyncio.run(value)  # type: ignore[arg-type]
        except ToolError:
            raise
        except Exception as exc:
            raise ToolExecutionError(
                exception_text(exc),
                tool=name,
                **crashes.record(self, f"{type(self).__name__}.{name} (tool)", exc, **crashes.TOOL),
            ) from exc
        return _dump(spec, value)

    def step(
        self,
        action: ListToolsAction | CallToolAction,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> Observation:
        """Apply a tool action synchronously (in-process use; servers use `astep`)."""
        self._require_episode()
        if isinstance(action, ListToolsAction):
            return self.finish_step(action, self._list_observation())
        tool_ctx = self._simulation_context(action.tool_name)
        try:
            with use_context(tool_ctx) if tool_ctx else contextlib.nullcontext():
                result = self.call_tool_sync(action.tool_name, action.arguments)
            obs = CallToolObservation(tool_name=action.tool_name, result=result)
        except ToolError as err:
            obs = CallToolObservation(
                tool_name=action.tool_name, error=ToolErrorInfo(**err.to_info())
            )
        return self.finish_step(action, _with_events(obs, tool_ctx))

    async def astep(
        self,
        action: ListToolsAction | CallToolAction,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> Observation:
        """Apply a tool action; tool failures become `CallToolObservation.error`, not exceptions."""
        if not self._started:
            self._require_episode()
        if isinstance(action, ListToolsAction):
            return await self.afinish_step(action, self._list_observation())
        tool_ctx = self._simulation_context(action.tool_name)
        try:
            if tool_ctx is None:  # the common case: no context to install
                result = await self.invoke_tool(action.tool_name, action.arguments, timeout_s)
            else:
                with use_context(tool_ctx):
                    result = await self.invoke_tool(action.tool_name, action.arguments, timeout_s)
            obs = _validate_observation({"tool_name": action.tool_name, "result": result})
        except ToolError as err:
            obs = CallToolObservation(
                tool_name=action.tool_name, error=ToolErrorInfo(**err.to_info())
            )
        if self.rubric is None:  # nothing to await: spare the coroutine
            return self.finish_step(action, _with_events(obs, tool_ctx))
        return await self.afinish_step(action, _with_events(obs, tool_ctx))

    def _simulation_context(self, tool_name: str) -> ToolContext | None:
        """A recording `ToolContext` for a tool taking one (its logs go in the observation)."""
        spec = self.tool_specs.get(tool_name)
        if spec is None or spec.context_param is None or has_context():
            return None  # no context needed, or the caller (a transport, a test) set its own
        return ToolContext()

    def _list_observation(self) -> ListToolsObservation:
        return ListToolsObservation(tools=[s.info for s in self.visible_tools()])

    def _require_episode(self) -> None:
        if not self._started:
            raise SessionError("No episode: call reset() before step().")

    def finish_step(self, action: Action, obs: Observation) -> Observation:
        """Count a step, set `done`, then score it (so the reward sees the final `done`); a step
        after the one that reported `done` scores 0, so summed rewards count the end once.

        `step` calls it after every action; a transport that runs a tool by another path calls
        it, or `afinish_step`, to make that call a scored step as well.
        """
        self._state.step_count += 1
        # mcpgym's own observation (no assignment validation, no custom `__setattr__`): the
        # fields are set as pydantic's handler sets them, minus two calls each
        plain = type(obs) is CallToolObservation and _PLAIN_ASSIGNMENT
        if plain:
            vars(obs)["done"] = self._done
            obs.__pydantic_fields_set__.add("done")
        else:
            obs.done = self._done
        if self._ended:
            reward = 0.0
        elif self.rubric is not None:
            reward = self._trace().score(self.rubric, self, action, obs)
        else:
            try:
                reward = self.reward(action, obs)
            except Exception as exc:
                raise ExecutionError(
                    f"reward() raised {type(exc).__name__}: {exc}",
                    **crashes.record(self, f"{type(self).__name__}.reward", exc),
                ) from exc
        if plain:
            vars(obs)["reward"] = reward
            obs.__pydantic_fields_set__.add("reward")
        else:
            obs.reward = reward
        self._ended = self._done
        return obs

    async def afinish_step(self, action: Action, obs: Observation) -> Observation:
        """`finish_step` for async callers: an async rubric (an `LLMJudge`) is awaited."""
        if self.rubric is None or self._ended:
            return self.finish_step(action, obs)
        self._state.step_count += 1
        obs.done = self._done
        obs.reward = await self._trace().ascore(self.rubric, self, action, obs)
        self._ended = self._done
        return obs

    def _trace(self) -> RubricTrace:
        if self._rubric_trace is None:  # a subclass reset() that skipped super().reset()
            self._rubric_trace = RubricTrace()
        return self._rubric_trace


# The hot path of every tool step: pydantic's validators called directly (the model methods
# around them cost as much again as the validation of these small models).
_validate_call: Callable[[Any], CallToolAction] = (
    CallToolAction.__pydantic_validator__.validate_python
)
_validate_observation: Callable[[Any], CallToolObservation] = (
    CallToolObservation.__pydantic_validator__.validate_python
)


_PLAIN_ASSIGNMENT = (
    not CallToolObservation.model_config.get("validate_assignment")
    and CallToolObservation.__setattr__ is BaseModel.__setattr__
)


def _with_events(obs: CallToolObservation, ctx: ToolContext | None) -> CallToolObservation:
    if ctx is not None and ctx.events:
        obs.metadata["tool_events"] = ctx.events
    return obs
