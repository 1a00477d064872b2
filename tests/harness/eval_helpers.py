"""Agents, environments and a scripted OpenAI-compatible server for the evaluation tests.

Also importable by `mcpgym eval` subprocesses (put this folder on PYTHONPATH):
`--env eval_helpers:PacedGuess --agent eval_helpers:logging_bisect`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpgym import Action, CallToolObservation, Observation, StepResult, ToolInfo
from mcpgym.examples.guess import GuessEnv
from mcpgym.harness.episodes import AgentAction, EpisodeSpec
from mcpgym.harness.eval.report import ReportSection, Text


def secret(seed: int, low: int = 1, high: int = 100) -> int:
    """GuessEnv's secret for `seed` (it draws with `random.Random(seed)`)."""
    return random.Random(seed).randint(low, high)


# -- agents ----------------------------------------------------------------------------------------


class BisectEpisode:
    """Binary search on GuessEnv's verdicts: always solves 1..100 within 7 guesses."""

    def __init__(self) -> None:
        self.lo, self.hi, self.mid = 1, 100, 0

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        obs = result.observation
        if isinstance(obs, CallToolObservation) and isinstance(obs.result, dict):
            verdict = obs.result.get("verdict")
            if verdict == "higher":
                self.lo = self.mid + 1
            elif verdict == "lower":
                self.hi = self.mid - 1
        self.mid = (self.lo + self.hi) // 2
        return {"type": "call_tool", "tool_name": "guess", "arguments": {"n": self.mid}}

    async def aclose(self) -> None:
        return None


class Bisect:
    """The scripted agent of the runner tests; records which specs it started."""

    name = "bisect"

    def __init__(self, log: Path | None = None) -> None:
        self.started: list[str] = []
        self.tools: list[list[str]] = []
        self.log = log

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> BisectEpisode:
        self.started.append(spec.id)
        self.tools.append(sorted(t.name for t in tools))
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as fh:
                fh.write(spec.id + "\n")
        return BisectEpisode()


def logging_bisect() -> Bisect:
    """For CLI subprocesses: a `Bisect` logging started spec ids to `$EVAL_START_LOG`."""
    path = os.environ.get("EVAL_START_LOG")
    return Bisect(Path(path) if path else None)


class Scripted:
    """Plays `behaviour(turn, result)` each turn; a hook to build odd agents in one line."""

    def __init__(self, behaviour: Callable[[int, StepResult[Observation]], Any], name: str = "s"):
        self.behaviour = behaviour
        self.name = name
        self.closed = 0

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> ScriptedEpisode:
        return ScriptedEpisode(self)


class ScriptedEpisode:
    def __init__(self, agent: Scripted) -> None:
        self.agent = agent
        self.turn = 0

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        self.turn += 1
        value = self.agent.behaviour(self.turn, result)
        return (await value) if asyncio.iscoroutine(value) else value

    async def aclose(self) -> None:
        self.agent.closed += 1


# -- environments ----------------------------------------------------------------------------------


class PacedGuess(GuessEnv):
    """GuessEnv whose every step takes a few milliseconds of (simulated) work, so that a run of
    a hundred episodes lasts long enough to be killed halfway."""

    async def astep(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        await asyncio.sleep(0.004)
        return await super().astep(action, timeout_s=timeout_s, **kwargs)


class VerdictGuess(GuessEnv):
    """GuessEnv that states success itself, failing episodes solved in more than 3 guesses."""

    def reward(self, action: Action, observation: Observation) -> float | None:
        value = super().reward(action, observation)
        if self.game.solved:
            observation.metadata["success"] = len(self.game.guesses) <= 3
            observation.metadata["grade"] = {"guesses": len(self.game.guesses)}
        return value


# -- a scripted OpenAI-compatible endpoint ---------------------------------------------------------


def tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def reply(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "x"}
        ],
    }


class ScriptedModel:
    """A chat-completions endpoint that plays `script[i]` as its answer to the i-th assistant
    turn of a conversation (i = assistant messages already in the request), so concurrent
    conversations each get the whole script. Records every request and its headers."""

    def __init__(self, script: list[dict[str, Any]], *, status: int = 200) -> None:
        self.script = script
        self.status = status
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def completions(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.status != 200:
            return JSONResponse({"error": {"message": "scripted failure"}}, status_code=self.status)
        turn = sum(m.get("role") == "assistant" for m in body["messages"])
        if turn >= len(self.script):
            return JSONResponse(reply({"content": "I am done."}))
        return JSONResponse(reply(self.script[turn]))

    def app(self) -> Starlette:
        async def health(request: Request) -> Response:
            return JSONResponse({"status": "healthy"})

        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.completions, methods=["POST"]),
                Route("/health", health),
            ]
        )


# -- a task module for `--tasks` and `--section` ---------------------------------------------------


def suite() -> list[EpisodeSpec]:
    """Three tagged GuessEnv tasks."""
    return [
        EpisodeSpec(
            id=f"task-{i}",
            reset={"seed": i},
            prompt="Guess.",
            max_steps=10,
            tags={"tier": "T1" if i < 2 else "T2"},
        )
        for i in range(3)
    ]


def section(records: Any, summary: Any) -> ReportSection:
    """A report section hook: which tiers the run saw."""
    tiers = sorted({r.tags["tier"] for r in records})
    return ReportSection("Tiers seen", [Text(", ".join(tiers))], data={"tiers": tiers})
