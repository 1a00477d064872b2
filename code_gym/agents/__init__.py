"""Agents for Code Gym, found by `mcpgym eval --agent code-oracle|code-naive` (entry points).

`oracle` and `naive` are described in `code_gym.agents.reference`; `code_gym.agents.gamers`
holds the cheats the grader must score 0 (tests and `mcpgym eval --agent
code_gym.agents.gamers:NAME`).
"""

from __future__ import annotations

from code_gym.agents.reference import NaiveAgent, OracleAgent

__all__ = ["NaiveAgent", "OracleAgent", "naive", "oracle"]


def oracle() -> OracleAgent:
    """The `code-oracle` agent factory (entry point `mcpgym.agents`)."""
    return OracleAgent()


def naive() -> NaiveAgent:
    """The `code-naive` agent factory (entry point `mcpgym.agents`)."""
    return NaiveAgent()
