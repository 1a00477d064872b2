"""Agents for the Calendar Gym benchmark, registered with the evaluation runner.

- `oracle` (`OracleAgent`) plays each task's gold plan: 100 % in both phrasings.
- `naive` (`NaiveAgent`) is a deterministic rule-based baseline: first name match, no offsets
  unless given, one retry from the error's example. It makes the explicit-vs-natural gap and the
  effect of structured errors visible without a model.

Both read the task from `EpisodeSpec.data` (see `calendar_gym.suite.specs`). They are found by
`mcpgym eval --agent oracle|naive` through the `mcpgym.agents` entry points.

    >>> from mcpgym.harness.agents import load_agent, register_agent
    >>> register_agent("naive", naive)
    >>> load_agent("naive").name
    'naive'
"""

from __future__ import annotations

from calendar_gym.agents.naive import NaiveAgent
from calendar_gym.agents.oracle import OracleAgent

__all__ = ["NaiveAgent", "OracleAgent", "naive", "oracle"]


def oracle() -> OracleAgent:
    """The `oracle` agent factory (entry point `mcpgym.agents`)."""
    return OracleAgent()


def naive() -> NaiveAgent:
    """The `naive` agent factory (entry point `mcpgym.agents`)."""
    return NaiveAgent()
