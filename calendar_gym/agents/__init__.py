"""Agents for the Calendar Gym benchmark, registered with the evaluation runner.

- `oracle` (`OracleAgent`) plays each task's gold plan: 100 % in both phrasings.
- `naive` (`NaiveAgent`) is a deterministic rule-based baseline: first name match, no offsets
  unless given, one retry from the error's example. It makes the explicit-vs-natural gap and the
  effect of structured errors visible without a model.

Reference agents bound the scores (`calendar_gym.agents.reference`): `null` (finish at once;
`null-done`, `null-cannot-complete`, `null-needs-clarification`), `random` (random calls, random
finish) and `first-match` (first hit of every look-up, never verifies).

Task agents read the task from `EpisodeSpec.data` (see `calendar_gym.suite.specs`). They are
found by `mcpgym eval --agent oracle|naive|first-match|random|null...` through the
`mcpgym.agents` entry points.

    >>> from mcpgym.harness.agents import load_agent, register_agent
    >>> register_agent("naive", naive)
    >>> load_agent("naive").name
    'naive'
"""

from __future__ import annotations

from calendar_gym.agents.crawler import CrawlerAgent
from calendar_gym.agents.gamers import GAMERS, GamerAgent
from calendar_gym.agents.naive import NaiveAgent
from calendar_gym.agents.oracle import OracleAgent
from calendar_gym.agents.reference import FirstMatchAgent, NullAgent, RandomAgent

__all__ = [
    "GAMERS",
    "CrawlerAgent",
    "FirstMatchAgent",
    "GamerAgent",
    "NaiveAgent",
    "NullAgent",
    "OracleAgent",
    "RandomAgent",
    "crawler",
    "first_match",
    "naive",
    "null",
    "null_cannot_complete",
    "null_done",
    "null_needs_clarification",
    "oracle",
    "random_agent",
    "reference_agents",
]


def oracle() -> OracleAgent:
    """The `oracle` agent factory (entry point `mcpgym.agents`)."""
    return OracleAgent()


def crawler() -> CrawlerAgent:
    """The `crawler` agent factory: the natural phrasing from look-ups alone (the solvability
    proof; the gamers of `calendar_gym.agents.gamers` are `GamerAgent(name)`)."""
    return CrawlerAgent()


def naive() -> NaiveAgent:
    """The `naive` agent factory (entry point `mcpgym.agents`)."""
    return NaiveAgent()


def first_match() -> FirstMatchAgent:
    """The `first-match` agent factory (entry point `mcpgym.agents`)."""
    return FirstMatchAgent()


def random_agent() -> RandomAgent:
    """The `random` agent factory (entry point `mcpgym.agents`)."""
    return RandomAgent()


def null() -> NullAgent:
    """The `null` agent factory: finishes at once with `cannot_complete`."""
    return NullAgent("cannot_complete", name="null")


def null_done() -> NullAgent:
    """`null-done`: finishes at once with `done`."""
    return NullAgent("done")


def null_cannot_complete() -> NullAgent:
    """`null-cannot-complete`: finishes at once with `cannot_complete`."""
    return NullAgent("cannot_complete")


def null_needs_clarification() -> NullAgent:
    """`null-needs-clarification`: finishes at once with `needs_clarification`."""
    return NullAgent("needs_clarification")


def reference_agents() -> list[
    OracleAgent | NaiveAgent | FirstMatchAgent | RandomAgent | NullAgent
]:
    """Every agent the demo runs, ceiling first: oracle, naive, first-match, random, and the
    null agent with each finish status."""
    return [
        OracleAgent(),
        NaiveAgent(),
        FirstMatchAgent(),
        RandomAgent(),
        null_done(),
        null_cannot_complete(),
        null_needs_clarification(),
    ]
