"""Test helpers for pools: an agent that holds its first turns until the test says go."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from mcpgym.harness.episodes import Agent, AgentAction, AgentEpisode, EpisodeSpec
from mcpgym.types import Observation, StepResult, ToolInfo


class GateAgent:
    """Wraps `inner`; the first `hold` episodes wait at their first turn until `gate` is set,
    so exactly that many sessions are in flight when the test kills a server."""

    def __init__(self, inner: Agent, hold: int) -> None:
        self.inner = inner
        self.name = inner.name
        self.hold = hold
        self.waiting = 0
        self.held = asyncio.Event()
        self.gate = asyncio.Event()
        self.started = 0

    async def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> AgentEpisode:
        made = self.inner.start(spec, tools)
        episode = await made if inspect.isawaitable(made) else made
        self.started += 1
        gated = self.started <= self.hold
        return _Gated(self, episode, gated)


class _Gated:
    def __init__(self, agent: GateAgent, inner: AgentEpisode, gated: bool) -> None:
        self.agent, self.inner, self.gated = agent, inner, gated

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        if self.gated:
            self.gated = False
            self.agent.waiting += 1
            if self.agent.waiting >= self.agent.hold:
                self.agent.held.set()
            await self.agent.gate.wait()
        return await self.inner.act(result)

    async def aclose(self) -> None:
        await self.inner.aclose()


def member_of(pool: Any, slot: int, generation: int) -> Any:
    return next(m for m in pool.members if m.slot == slot and m.generation == generation)
