"""`mcpgym eval --harness NAME`: evaluate a real harness with the evaluation runner.

Each episode's environment is a `HarnessEnvironment` around the task environment (its
production tools served to the harness), and the runner's agent plays the *user*
(`HarnessUser`): its first action is the spec's prompt as one `HarnessAction`, then each message
of `spec.data["user_turns"]`, then it stops. A harness turn is one runner step, so the runner's
`--turn-timeout` is the turn deadline; rewards, `done` and the final metadata (the wrapped
environment's grades, `termination`) come from the `HarnessEnvironment`.

Model calls go through a capture proxy that forwards to `--model-url` (which must speak the
harness's dialect: Anthropic Messages for Claude Code, OpenAI Responses for Codex, Chat
Completions for OpenCode) with `--api-key`, renaming the model to `--model`; every episode's
trajectory (turns, tool calls, labelled model calls) is appended to `trajectories.jsonl`.

    mcpgym eval --harness claude-code --env calendar_gym:CalendarEnv \\
        --tasks calendar_gym.tasks:t1 --model-url http://127.0.0.1:8000/v1 \\
        --model Qwen/Qwen3-8B --concurrency 4 --out runs/t1
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpgym.harness.adapters import make_adapter
from mcpgym.harness.capture import CaptureProxy, Upstream
from mcpgym.harness.episodes import AgentAction, EpisodeSpec
from mcpgym.harness.eval.options import add_harness_arguments as add_arguments
from mcpgym.harness.hosted.env import HarnessAction, HarnessEnvironment
from mcpgym.harness.sessions import InProcess
from mcpgym.harness.trajectory import TrajectoryWriter
from mcpgym.servers.factory import load_target
from mcpgym.types import Observation, StepResult, ToolInfo

__all__ = ["HARNESS_MODELS", "HarnessEvalConfig", "HarnessUser", "add_arguments", "harness_eval"]

HARNESS_MODELS = {"claude-code": "claude-sonnet-4-5", "codex": "gpt-5-codex"}
"""The model id each harness asks for by default (the proxy renames it to `--model`). Codex
needs an id outside its own catalog, or tool search hides the MCP tools."""


class HarnessUser:
    """The runner's agent for harness episodes: it plays the user (see the module docstring)."""

    def __init__(self, name: str = "harness-user") -> None:
        self.name = name

    def start(self, spec: EpisodeSpec, tools: list[ToolInfo]) -> _UserEpisode:
        messages = [spec.prompt, *spec.data.get("user_turns", ())]
        return _UserEpisode([str(m) for m in messages if m])


class _UserEpisode:
    def __init__(self, messages: list[str]) -> None:
        self.messages = messages

    async def act(self, result: StepResult[Observation]) -> AgentAction:
        if result.done or not self.messages:
            return None
        return HarnessAction(message=self.messages.pop(0))

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class HarnessEvalConfig:
    """Everything `harness_eval` needs (`from_args` reads it off the `mcpgym eval` options)."""

    harness: str
    env: str
    model_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    harness_model: str | None = None
    executable: str | None = None
    command: Sequence[str] = ()
    transport: str = "http"
    tools: str = "production"
    turn_timeout_s: float = 600.0
    trajectories: Path | None = None
    options: dict[str, Any] = field(default_factory=dict[str, Any])

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> HarnessEvalConfig:
        out: Path | None = getattr(args, "out", None)
        return cls(
            harness=args.harness,
            env=args.env,
            model_url=args.model_url,
            model=args.model,
            api_key=args.api_key,
            harness_model=args.harness_model,
            executable=args.harness_bin,
            command=tuple(args.harness_command or ()),
            transport=args.harness_transport,
            tools=args.harness_tools,
            turn_timeout_s=args.turn_timeout or 600.0,
            trajectories=out / "trajectories.jsonl" if out else None,
        )

    def adapter_options(self) -> dict[str, Any]:
        options = dict(self.options)
        if self.harness == "cli":
            if not self.command:
                raise ValueError("--harness cli needs --harness-command 'PROGRAM ARGS...'")
            options["command"] = list(self.command)
        elif self.harness == "python":
            raise ValueError("--harness python takes a Python callable: use the API")
        elif self.executable:
            options["executable"] = self.executable
        return options


@contextlib.asynccontextmanager
async def harness_eval(
    config: HarnessEvalConfig, *, proxy: CaptureProxy | None = None
) -> AsyncIterator[tuple[InProcess, HarnessUser]]:
    """The runner's target (a `HarnessEnvironment` per episode) and agent, with a capture proxy
    forwarding to `config.model_url` running for as long as the block does (or the running
    `proxy` given, e.g. one with an in-process model)."""
    if proxy is None and not config.model_url:
        raise ValueError("--harness needs --model-url: the model the harness talks to")
    target = load_target(config.env)
    options = config.adapter_options()
    make_adapter(config.harness, **dict(options))  # fail early on a bad harness or option
    async with contextlib.AsyncExitStack() as stack:
        if proxy is None:
            upstream = Upstream(
                str(config.model_url), api_key=config.api_key or "", model=config.model
            )
            proxy = await stack.enter_async_context(CaptureProxy(upstream=upstream))
        writer = (
            stack.enter_context(TrajectoryWriter(config.trajectories))
            if config.trajectories
            else None
        )
        running = proxy

        def factory() -> HarnessEnvironment:
            return HarnessEnvironment(
                target,
                make_adapter(config.harness, **dict(options)),
                capture=running,
                model_name=config.harness_model
                or HARNESS_MODELS.get(config.harness, config.model or "default"),
                turn_timeout_s=config.turn_timeout_s,
                transport="stdio" if config.transport == "stdio" else "http",
                tools="simulation" if config.tools == "simulation" else "production",
                trajectories=writer,
            )

        name = f"{config.env} via {config.harness}"
        yield InProcess(factory, name=name), HarnessUser(f"harness:{config.harness}")
