"""mcpgym.harness: drive agents against environments.

- evaluation: `evaluate` / `run_evaluation` run an `Agent` over `EpisodeSpec`s at bounded
  concurrency, writing resumable `episodes.jsonl`, `summary.json` and a report (`mcpgym eval`);
- real agent CLIs: `HarnessEnvironment` runs Claude Code, Codex, OpenCode or any CLI agent one
  conversational turn per `step` through an `AgenticHarnessAdapter`;
- capture: `CaptureProxy` records every model call between a harness and its model, and
  `mcpgym.harness.trajectory` turns them into role-labelled trajectories.

Names are imported lazily: `import mcpgym.harness` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpgym.harness.adapters import AgenticHarnessAdapter, make_adapter
    from mcpgym.harness.capture import CaptureProxy
    from mcpgym.harness.episodes import Agent, AgentEpisode, EpisodeRecord, EpisodeSpec
    from mcpgym.harness.eval.runner import evaluate, run_evaluation
    from mcpgym.harness.hosted.env import HarnessAction, HarnessEnvironment

__all__ = [
    "Agent",
    "AgentEpisode",
    "AgenticHarnessAdapter",
    "CaptureProxy",
    "EpisodeRecord",
    "EpisodeSpec",
    "HarnessAction",
    "HarnessEnvironment",
    "evaluate",
    "make_adapter",
    "run_evaluation",
]

_WHERE = {
    "Agent": "episodes",
    "AgentEpisode": "episodes",
    "EpisodeRecord": "episodes",
    "EpisodeSpec": "episodes",
    "AgenticHarnessAdapter": "adapters",
    "make_adapter": "adapters",
    "CaptureProxy": "capture",
    "HarnessAction": "hosted.env",
    "HarnessEnvironment": "hosted.env",
    "evaluate": "eval.runner",
    "run_evaluation": "eval.runner",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpgym.harness' has no attribute {name!r}")
    return getattr(importlib.import_module(f"mcpgym.harness.{module}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
