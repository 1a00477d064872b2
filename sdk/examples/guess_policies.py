"""Reference policies of Guess the Number, for `mcpgym validate` and `mcpgym eval --agent`.

- `oracle()` — binary search: always finds the secret (reward 1.0) within log2(range) + 1 guesses.
- `null()` — gives up at once (no guess), the floor the reward must stand clear of.

Both follow the evaluation runner's agent shape: `start(spec, tools)` returns an episode whose
`act(result)` returns the next action or `None`.

Example:
    >>> from mcpgym.examples.guess import GuessEnv
    >>> from mcpgym import CallToolAction
    >>> env = GuessEnv(); first = env.reset(seed=3)
    >>> ep = oracle().start(type("Spec", (), {"reset": {}})(), [])
    >>> import asyncio
    >>> from mcpgym import StepResult
    >>> result = StepResult(observation=first)
    >>> while not result.done:
    ...     action = asyncio.run(ep.act(result))
    ...     obs = env.step(CallToolAction(**action))
    ...     result = StepResult(observation=obs, reward=obs.reward, done=obs.done)
    >>> result.reward
    1.0
"""

from __future__ import annotations

from typing import Any

__all__ = ["null", "oracle"]


class _Search:
    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high
        self.last: int | None = None

    async def act(self, result: Any) -> dict[str, Any] | None:
        obs = result.observation
        verdict = (getattr(obs, "result", None) or {}).get("verdict") if self.last else None
        if verdict == "higher":
            self.low = self.last + 1  # type: ignore[operator]
        elif verdict == "lower":
            self.high = self.last - 1  # type: ignore[operator]
        if self.low > self.high:
            return None
        self.last = (self.low + self.high) // 2
        return {"type": "call_tool", "tool_name": "guess", "arguments": {"n": self.last}}

    async def aclose(self) -> None:
        return None


class _Oracle:
    name = "guess-oracle"

    def start(self, spec: Any, tools: Any) -> _Search:
        reset = dict(getattr(spec, "reset", {}) or {})
        return _Search(int(reset.get("low", 1)), int(reset.get("high", 100)))


class _Idle:
    async def act(self, result: Any) -> None:
        return None

    async def aclose(self) -> None:
        return None


class _Null:
    name = "guess-null"

    def start(self, spec: Any, tools: Any) -> _Idle:
        return _Idle()


def oracle() -> _Oracle:
    """The binary-search oracle (see the module docstring)."""
    return _Oracle()


def null() -> _Null:
    """The do-nothing policy (see the module docstring)."""
    return _Null()
