"""Play one episode: reset, let the agent act until it stops or the environment is done, record.

`run_episode` never raises for what happens inside the episode (an agent crash, an environment
error, a lost connection, a timeout): it ends the episode and says why in the record's
`done_reason` and `error`. Only cancellation propagates.

Example:
    >>> import asyncio
    >>> from mcpgym.examples.guess import GuessEnv
    >>> from mcpgym.harness.sessions import InProcess
    >>> class Bisect:
    ...     name = "bisect"
    ...     def start(self, spec, tools):
    ...         return BisectEpisode()
    >>> class BisectEpisode:
    ...     lo, hi = 1, 100
    ...     async def act(self, result):
    ...         verdict = getattr(result.observation, "result", None) or {}
    ...         if verdict.get("verdict") == "higher": self.lo = self.mid + 1
    ...         if verdict.get("verdict") == "lower": self.hi = self.mid - 1
    ...         self.mid = (self.lo + self.hi) // 2
    ...         return {"type": "call_tool", "tool_name": "guess", "arguments": {"n": self.mid}}
    ...     async def aclose(self): pass
    >>> spec = EpisodeSpec(id="g1", reset={"seed": 3})
    >>> record = asyncio.run(run_episode(spec, Bisect(), InProcess(GuessEnv)))
    >>> record.done_reason, record.success, record.steps <= 7
    ('done', True, True)
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from mcpgym.harness.episodes import (
    DEFAULT_SUCCESS_THRESHOLD,
    Agent,
    AgentEpisode,
    CallRecord,
    DoneReason,
    EpisodeRecord,
    EpisodeSpec,
    EpisodeTiming,
    episode_success,
)
from mcpgym.harness.sessions import EnvSession, EnvTarget
from mcpgym.pool import InfrastructureError
from mcpgym.types import Action, CallToolAction, CallToolObservation, StepResult

__all__ = ["EpisodeLimits", "run_episode"]


@dataclass(frozen=True, slots=True)
class EpisodeLimits:
    """Time limits of one episode, in seconds (`None`: no limit).

    `turn_timeout` bounds each agent turn (one `act` call) and is passed to the environment as the
    step's `timeout_s`; `episode_timeout` bounds the whole episode, reset included.
    """

    turn_timeout: float | None = None
    episode_timeout: float | None = None
    success_threshold: float = DEFAULT_SUCCESS_THRESHOLD


_GRADED: frozenset[DoneReason] = frozenset({"done", "max_steps", "agent_stopped", "malformed"})
"""Episodes that ended normally are graded; errors and timeouts are failures."""


class _TurnTimeout(Exception):
    pass


@dataclass
class _Tally:
    """What the loop accumulates while the episode runs."""

    steps: int = 0
    turns: int = 0
    rewards: list[float] = field(default_factory=list[float])
    calls: list[CallRecord] = field(default_factory=list[CallRecord])
    final_metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    model_turns: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    malformed: int = 0
    timing: EpisodeTiming = field(default_factory=EpisodeTiming)

    def observe(self, result: StepResult[Any]) -> None:
        self.final_metadata = dict(getattr(result.observation, "metadata", None) or {})

    def step(self, action: Action | dict[str, Any], result: StepResult[Any]) -> None:
        self.steps += 1
        self.rewards.append(float(result.reward or 0.0))
        self.observe(result)
        tool, arguments = _tool_call(action)
        if tool is None:
            return
        obs = result.observation
        error = getattr(obs, "error", None)
        detail = error.model_dump(mode="json") if error is not None else None
        self.calls.append(
            CallRecord(
                step=self.steps,
                tool=tool,
                arguments=arguments,
                error_type=detail.get("error_type") if detail else None,
                error=detail,
                result=_jsonable(obs.result) if isinstance(obs, CallToolObservation) else None,
                reward=result.reward,
            )
        )


async def run_episode(
    spec: EpisodeSpec,
    agent: Agent,
    target: EnvTarget,
    limits: EpisodeLimits | None = None,
) -> EpisodeRecord:
    """Play `spec` with `agent` on a fresh session of `target`; return its record."""
    limits = limits or EpisodeLimits()
    tally = _Tally()
    reason: DoneReason = "error"
    error: str | None = None
    session: EnvSession | None = None
    episode: AgentEpisode | None = None
    start = time.monotonic()
    tally.timing.started_at = time.time()
    deadline = asyncio.timeout(limits.episode_timeout)
    try:
        async with deadline:
            session = await target.open()
            options = {"episode_id": spec.id, **spec.reset}
            t0 = time.monotonic()
            result = await session.reset(options)
            tally.timing.reset_s = time.monotonic() - t0
            tally.observe(result)
            started = agent.start(spec, await session.tools())
            episode = await started if inspect.isawaitable(started) else started
            reason = await _play(spec, episode, session, result, tally, limits)
    except TimeoutError:
        if not deadline.expired():
            raise
        reason, error = "episode_timeout", f"episode exceeded {limits.episode_timeout} s"
    except _TurnTimeout:
        reason, error = "turn_timeout", f"a turn exceeded {limits.turn_timeout} s"
    except InfrastructureError as exc:  # the server died under the episode: not the agent
        reason, error = "infra_error", f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        reason, error = "error", f"{type(exc).__name__}: {exc}"
    finally:
        await _close(episode, session)
    if episode is not None:
        reason, error = _agent_log(episode, tally, reason, error)
    tally.timing.wall_s = time.monotonic() - start
    return _record(spec, agent, tally, reason, error, limits)


async def _play(
    spec: EpisodeSpec,
    episode: AgentEpisode,
    session: EnvSession,
    result: StepResult[Any],
    tally: _Tally,
    limits: EpisodeLimits,
) -> DoneReason:
    if result.done:
        return "done"
    while True:
        # One pass through the event loop per turn: an agent and an environment that never
        # suspend (a scripted agent, in-process sync tools) would otherwise hold the loop for
        # the whole run: no other episode, deadline, progress bar or Ctrl-C would get a turn.
        await asyncio.sleep(0)
        tally.turns += 1
        t0 = time.monotonic()
        # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow the episode deadline's
        # cancellation when the turn finishes at the same moment, and the episode runs on.
        turn = asyncio.timeout(limits.turn_timeout)
        try:
            async with turn:
                action = await episode.act(result)
        except TimeoutError:
            if turn.expired():
                raise _TurnTimeout from None
            raise
        finally:
            tally.timing.agent_s.append(time.monotonic() - t0)
        if action is None:
            return "agent_stopped"
        wire = action if isinstance(action, Action) else dict(action)
        t0 = time.monotonic()
        result = await session.step(wire, limits.turn_timeout)
        tally.timing.env_s.append(time.monotonic() - t0)
        tally.step(wire, result)
        if result.done:
            return "done"
        if tally.steps >= spec.max_steps:
            return "max_steps"


async def _close(episode: AgentEpisode | None, session: EnvSession | None) -> None:
    try:
        if episode is not None:
            async with asyncio.timeout(10.0):
                await episode.aclose()
    except Exception:  # a failing cleanup must not hide the episode's outcome
        pass
    finally:
        if session is not None:
            await session.close()


def _agent_log(
    episode: AgentEpisode, tally: _Tally, reason: DoneReason, error: str | None
) -> tuple[DoneReason, str | None]:
    """What a model-backed agent recorded of its own turns (duck-typed: `model_turns`,
    `model_seconds`, `stop_reason`, `stop_detail`), and why it stopped when it said so."""
    turns = getattr(episode, "model_turns", None)
    if isinstance(turns, list):
        tally.model_turns = _jsonable(turns)
        tally.malformed = sum(len(t.get("rejected") or ()) for t in turns if isinstance(t, dict))
    seconds = getattr(episode, "model_seconds", None)
    if isinstance(seconds, list):
        tally.timing.model_s = [float(s) for s in seconds]
    if reason == "agent_stopped" and getattr(episode, "stop_reason", None) == "malformed":
        return "malformed", str(getattr(episode, "stop_detail", None) or "malformed tool calls")
    return reason, error


def _record(
    spec: EpisodeSpec,
    agent: Agent,
    tally: _Tally,
    reason: DoneReason,
    error: str | None,
    limits: EpisodeLimits,
) -> EpisodeRecord:
    final = tally.rewards[-1] if tally.rewards else 0.0
    errors = Counter(c.error_type for c in tally.calls if c.error_type)
    return EpisodeRecord(
        spec_id=spec.id,
        group=spec.group,
        tags=dict(spec.tags),
        seed=spec.seed,
        agent=agent.name,
        reward_total=sum(tally.rewards),
        reward_final=final,
        success=reason in _GRADED
        and episode_success(tally.final_metadata, final, limits.success_threshold),
        steps=tally.steps,
        turns=tally.turns,
        tool_calls=len(tally.calls),
        tool_errors=dict(sorted(errors.items())),
        done_reason=reason,
        error=error,
        final_metadata=_jsonable(tally.final_metadata),
        calls=tally.calls,
        model_turns=tally.model_turns,
        malformed_calls=tally.malformed,
        timing=tally.timing,
    )


def _tool_call(action: Action | dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    if isinstance(action, CallToolAction):
        return action.tool_name, dict(action.arguments)
    if isinstance(action, dict) and action.get("type") == "call_tool":
        args = action.get("arguments")
        return str(action.get("tool_name")), dict(args) if isinstance(args, dict) else {}
    return None, {}


def _jsonable(value: Any) -> Any:
    """Plain JSON data (pydantic models dumped), so records compare equal across transports."""
    return json.loads(json.dumps(to_jsonable_python(value, fallback=repr)))
