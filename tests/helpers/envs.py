"""Throwaway environments for tests: plain (non-MCP) sync and async counters, and GuessEnv variants.

The plain counters record what the framework did to them (threads used, overlapping calls,
close) so tests can assert on it. Each `block` step waits on a gate the test opens.
"""

import asyncio
import threading
from collections.abc import Callable
from typing import Any, Literal

from mcpgym import Action, Environment, Observation, State, tool
from mcpgym.examples.guess import GuessEnv

# -- plain environments ----------------------------------------------------------------------------


class CountAction(Action):
    op: Literal["inc", "boom", "block"] = "inc"
    by: int = 1


class CountObservation(Observation):
    total: int = 0


class CountState(State):
    total: int = 0


class _Recorder:
    """What both counters record: threads, overlap, close."""

    def __init__(self) -> None:
        self._state = CountState()
        self.threads: list[int] = []
        self.active = 0
        self.max_active = 0
        self.entered: list[str] = []
        self.closed = False
        self.entered_block = threading.Event()

    def _enter(self, what: str) -> None:
        self.threads.append(threading.get_ident())
        self.entered.append(what)
        self.active += 1
        self.max_active = max(self.max_active, self.active)

    def _apply(self, action: CountAction) -> CountObservation:
        if action.op == "boom":
            raise RuntimeError("boom: the environment crashed")
        self._state.step_count += 1
        self._state.total += action.by
        return CountObservation(
            total=self._state.total, reward=float(action.by), done=self._state.total >= 10
        )

    @property
    def state(self) -> CountState:
        return self._state


class SyncCounter(_Recorder, Environment[CountAction, CountObservation, CountState]):
    """A sync plain environment; `block` steps wait on `gate` (a threading.Event)."""

    action_type = CountAction
    observation_type = CountObservation
    state_type = CountState

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> CountObservation:
        self._enter("reset")
        try:
            self._state = CountState(episode_id=episode_id)
            return CountObservation()
        finally:
            self.active -= 1

    def step(
        self, action: CountAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CountObservation:
        self._enter(f"step:{action.op}")
        try:
            if action.op == "block":
                self.entered_block.set()
                assert self.gate.wait(10), "test never opened the gate"
            return self._apply(action)
        finally:
            self.active -= 1

    def close(self) -> None:
        self.closed = True


class AsyncCounter(_Recorder, Environment[CountAction, CountObservation, CountState]):
    """The same counter with async methods; `block` steps wait on `gate` (an asyncio.Event)."""

    action_type = CountAction
    observation_type = CountObservation
    state_type = CountState

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> CountObservation:
        self._enter("reset")
        try:
            self._state = CountState(episode_id=episode_id)
            return CountObservation()
        finally:
            self.active -= 1

    async def step(
        self, action: CountAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CountObservation:
        self._enter(f"step:{action.op}")
        try:
            if action.op == "block":
                self.entered_block.set()
                await self.gate.wait()
            return self._apply(action)
        finally:
            self.active -= 1

    async def close(self) -> None:
        self.closed = True


class InlineCounter(SyncCounter):
    """`blocking = False`: sync methods run inline on the event loop."""

    blocking = False


class BrokenStateEnv(SyncCounter):
    """Resets and steps fine, but reading `state` raises."""

    @property
    def state(self) -> CountState:
        raise RuntimeError("state is broken")


# -- GuessEnv variants -----------------------------------------------------------------------------


class SlowGuessEnv(GuessEnv):
    """GuessEnv plus an async `nap` tool (a slow step) and a record of closed sessions.

    The class-level records are written on the server's event loop and read by tests.
    """

    napping: set[str] = set()
    closed: list[str | None] = []

    @tool
    async def nap(self, seconds: float) -> str:
        """Sleep for `seconds` (a slow step)."""
        self.napping.add(str(self.state.episode_id))
        await asyncio.sleep(seconds)
        return "rested"

    def close(self) -> None:
        self.closed.append(self.state.episode_id if self._started else None)


class CrashingRewardEnv(GuessEnv):
    """GuessEnv whose `reward()` crashes after the `explode` tool: an environment failure."""

    @tool
    def explode(self) -> str:
        """Arm the crash."""
        return "armed"

    def reward(self, action: Action, observation: Observation) -> float | None:
        if getattr(observation, "tool_name", None) == "explode":
            raise RuntimeError("reward exploded")
        return super().reward(action, observation)


class UnserializableObservationEnv(SyncCounter):
    """Steps return an observation whose metadata cannot be turned into JSON: an env bug."""

    def step(
        self, action: CountAction, timeout_s: float | None = None, **kwargs: Any
    ) -> CountObservation:
        if action.op == "boom":
            return CountObservation(metadata={"handle": object()})
        return super().step(action, timeout_s, **kwargs)


def recording(make: Callable[[], Any]) -> tuple[Callable[[], Any], list[Any]]:
    """A factory that keeps every instance it builds (a server's first one is its probe)."""
    built: list[Any] = []

    def factory() -> Any:
        env = make()
        built.append(env)
        return env

    return factory, built
