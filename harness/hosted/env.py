"""`HarnessEnvironment`: a real agent harness wrapped around an environment, one turn per step.

`reset` serves the wrapped environment's production tools over MCP for this episode
(`EpisodeToolServer`: Streamable HTTP on 127.0.0.1, or stdio through a relay) and starts the
harness with them; `step(HarnessAction(message=...))` runs one conversational turn and returns
what happened: the response, the turn's events, and the tool calls as the *environment* saw them.
The harness only ever sees the production tools — never `reset`, `step` or `state`.

Reward: the harness environment's `rubric` when it has one (scored per turn; its `RubricInput.env`
is the wrapped environment), else the sum of the rewards the wrapped environment's own rubric or
`reward()` gave this turn's tool calls. The episode is `done` when a tool ends it
(`end_episode()`), when the harness says so, or when the turn fails: a harness that dies ends it
with `termination="harness_crashed"` (the error holds its stderr tail), a turn that runs past its
deadline with `termination="turn_timeout"`. Either way everything the episode started is stopped,
and `reset` starts afresh.

Example::

    env = HarnessEnvironment(GuessEnv, ClaudeCodeAdapter(), capture=proxy)
    await env.areset(seed=1)
    obs = await env.astep(HarnessAction(message="Find the number between 1 and 100."))
    obs.response, [c.tool for c in obs.tool_calls], obs.reward
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from mcpgym.env import Environment
from mcpgym.errors import SessionError
from mcpgym.harness.adapters.base import AgenticHarnessAdapter, HarnessError, ModelEndpoint
from mcpgym.harness.adapters.env_server import EpisodeToolServer
from mcpgym.harness.adapters.episode import (
    EventHook,
    HarnessAction,
    HarnessObservation,
    HarnessState,
    Termination,
)
from mcpgym.harness.adapters.events import TurnComplete, llm_event
from mcpgym.harness.trajectory import ToolCallRecord as TrajectoryToolCall
from mcpgym.harness.trajectory import Trajectory, TrajectoryWriter, Turn, build_trajectory
from mcpgym.rubrics import Rubric
from mcpgym.rubrics.trace import RubricTrace
from mcpgym.tools import Mode

__all__ = [
    "EventHook",
    "HarnessAction",
    "HarnessEnvironment",
    "HarnessObservation",
    "HarnessState",
    "Termination",
]


class HarnessEnvironment(Environment[HarnessAction, HarnessObservation, HarnessState]):
    """Drive `adapter` against the production tools of `env` (a class, factory or "module:attr").

    Args:
        model: a fixed model endpoint for the harness; or
        capture: a running `CaptureProxy` — each episode gets its own key (its calls become
            `llm_request` / `llm_response` events) and `model_name` is the model asked for.
        turn_timeout_s: a turn's deadline (`step(timeout_s=...)` overrides it per turn).
        transport: how the harness reaches the tools: `"http"` or `"stdio"`.
        server_name: the MCP server's name (the harness derives tool names from it).
        tools: which face of the environment the harness sees: `"production"` (default) or
            `"simulation"` (for task suites whose `finish` tool is simulation-only).
        rubric: scores each turn (else the sum of the tool calls' rewards).
        on_event: called with every event as it happens (the `/harness` WebSocket streams them).
        trajectories: each episode's `trajectory()` is appended there when the episode ends.
    """

    action_type = HarnessAction
    observation_type = HarnessObservation
    state_type = HarnessState
    rubric: Rubric | None = None

    def __init__(
        self,
        env: Any,
        adapter: AgenticHarnessAdapter | Callable[[], AgenticHarnessAdapter],
        *,
        model: ModelEndpoint | None = None,
        capture: Any = None,
        model_name: str = "scripted",
        turn_timeout_s: float = 600.0,
        transport: Literal["http", "stdio"] = "http",
        server_name: str = "env",
        tools: Mode = "production",
        rubric: Rubric | None = None,
        on_event: EventHook | None = None,
        trajectories: TrajectoryWriter | None = None,
    ) -> None:
        self.adapter = adapter if isinstance(adapter, AgenticHarnessAdapter) else adapter()
        self.tools = EpisodeToolServer(env, name=server_name, mode=tools)
        self.model, self.capture, self.model_name = model, capture, model_name
        self.turn_timeout_s = turn_timeout_s
        self.transport: Literal["http", "stdio"] = transport
        if rubric is not None:
            self.rubric = rubric
        self.on_event, self.trajectories = on_event, trajectories
        self.capture_key: str | None = None
        self.turns: list[Turn] = []
        self._state = HarnessState(harness=self.adapter.name)
        self._trace = RubricTrace()

    @property
    def state(self) -> HarnessState:
        if self._state.running:
            self._state.env_state = self.tools.env_state()
        return self._state

    # -- episode -----------------------------------------------------------------------------------

    async def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> HarnessObservation:
        """Start the episode: the tools with these reset options, then the harness."""
        await self._teardown()
        self._drop_capture_key()
        options = {k: v for k, v in (("seed", seed), ("episode_id", episode_id)) if v is not None}
        self._state = HarnessState(episode_id=episode_id, harness=self.adapter.name)
        self._trace, self.turns = RubricTrace(), []
        try:
            observation = await self.tools.start(options | kwargs)
            await self.adapter.start(self.tools.mcp_server(self.transport), self._endpoint())
        except BaseException:
            await self._teardown()
            raise
        caps = self.adapter.capabilities
        names = [caps.tool_name(self.tools.name, s.name) for s in self.tools.env.visible_tools()]
        env_state = self.tools.env_state()
        self._state.episode_id = episode_id or env_state.get("episode_id")
        self._state.running, self._state.mcp_url = True, self.tools.url
        meta = {"harness": self.adapter.name, "tools": names, "env_state": env_state}
        return HarnessObservation(metadata=observation.metadata | meta)

    def _endpoint(self) -> ModelEndpoint | None:
        if self.capture is None:
            return self.model
        loop = asyncio.get_running_loop()

        def listener(phase: str, call: Any) -> None:  # runs on the proxy's thread or loop
            loop.call_soon_threadsafe(self._publish, llm_event(phase, call))

        key: str = self.capture.new_episode_key(
            label=self._state.episode_id or "", listener=listener
        )
        self.capture_key = key
        return ModelEndpoint(self.capture.base_url, key, self.model_name)

    def _publish(self, event: BaseModel) -> None:
        if self._state.running:
            self.adapter.publish(event)

    async def step(
        self,
        action: HarnessAction,
        timeout_s: float | None = None,
        turn_timeout_s: float | None = None,
        **kwargs: Any,
    ) -> HarnessObservation:
        """Run one turn (see the module docstring for reward, done and termination)."""
        if not self._state.running:
            ended = self._state.termination or "done"
            raise SessionError(f"No running episode ({ended}): call reset() first.")
        deadline = turn_timeout_s or timeout_s or self.turn_timeout_s
        first, started = len(self.tools.calls), time.time()
        self.tools.turn = len(self.turns)
        obs = HarnessObservation()
        harness_done = False
        try:
            async with asyncio.timeout(deadline):
                async for event in self.adapter.turn(action.message):
                    obs.events.append(event.model_dump(mode="json"))
                    await self._emit(event)
                    if isinstance(event, TurnComplete):
                        obs.response, harness_done = event.response, bool(event.done)
        except TimeoutError:
            obs.termination, obs.error = "turn_timeout", f"no answer within {deadline} s"
        except HarnessError as err:
            obs.termination, obs.error = "harness_crashed", err.message
        except BaseException:  # cancelled from outside: leave nothing running
            await self._teardown()
            raise
        self.turns.append(
            Turn(
                index=len(self.turns),
                message=action.message,
                events=obs.events,
                response=obs.response,
                started_at=started,
                duration_s=time.time() - started,
            )
        )
        obs.tool_calls = self.tools.calls[first:]
        obs.done = (
            obs.termination is not None or harness_done or any(c.done for c in obs.tool_calls)
        )
        obs.reward = await self._score(action, obs)
        st = self._state
        st.turns, st.tool_calls, st.step_count = (
            len(self.turns),
            len(self.tools.calls),
            st.turns + 1,
        )
        st.termination, st.env_state = obs.termination, self.tools.env_state()
        obs.metadata = {  # the environment's own step metadata (grades, verdicts) comes first
            **{k: v for c in obs.tool_calls for k, v in c.metadata.items()},
            **obs.metadata,
            "env_state": st.env_state,
            "harness_done": harness_done,
            "termination": obs.termination,
        }
        if obs.done:
            await self._teardown()
        return obs

    async def astep(
        self, action: HarnessAction, timeout_s: float | None = None, **kwargs: Any
    ) -> HarnessObservation:
        # The turn deadline is applied inside `step`, which then ends the episode with
        # `turn_timeout` and cleans up, instead of the base class cancelling the step.
        return await super().astep(action, None, turn_timeout_s=timeout_s, **kwargs)

    async def _emit(self, event: BaseModel) -> None:
        if self.on_event is not None:
            result = self.on_event(event)
            if inspect.isawaitable(result):
                await result

    async def _score(self, action: HarnessAction, obs: HarnessObservation) -> float | None:
        if self.rubric is not None:
            return await self._trace.ascore(self.rubric, self.tools.env, action, obs)
        rewards = [c.reward for c in obs.tool_calls if c.reward is not None]
        return sum(rewards) if rewards else None

    def trajectory(self, **metadata: Any) -> Trajectory:
        """The episode so far as a `Trajectory` (turns, the environment's tool calls, and the
        labelled model calls when a capture proxy is in use)."""
        return build_trajectory(
            str(self._state.episode_id or ""),
            harness=self.adapter.name,
            turns=self.turns,
            tool_calls=[
                TrajectoryToolCall(
                    turn=c.turn, name=c.tool, arguments=c.arguments, result=c.result, error=c.error
                )
                for c in self.tools.calls
            ],
            calls=self.llm_calls(),
            metadata={"state": self.state.model_dump(mode="json"), **metadata},
        )

    def llm_calls(self) -> list[Any]:
        """The model calls of the current (or just ended) episode, from the capture proxy."""
        if self.capture is None or self.capture_key is None:
            return []
        return self.capture.calls(self.capture_key)

    async def _teardown(self) -> None:
        """Stop the harness and the tool server (idempotent). The capture key is kept until the
        next reset, so the ended episode's `llm_calls()` can still be read."""
        running, self._state.running = self._state.running, False
        try:
            await self.adapter.stop()
        finally:
            await self.tools.stop()
        if running and self.turns and self.trajectories is not None:
            self.trajectories.write(self.trajectory())

    def _drop_capture_key(self) -> None:
        if self.capture is not None and self.capture_key is not None:
            with contextlib.suppress(KeyError):
                self.capture.drop_episode(self.capture_key)
        self.capture_key = None

    async def close(self) -> None:
        await self._teardown()
        self._drop_capture_key()
