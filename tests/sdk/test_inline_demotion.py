"""`blocking = False`: when an inline tool is moved to the worker pool, and the lock-free fast path.

A tool that holds the event loop beyond `inline_budget_s` twice within `STRIKE_WINDOW_S` runs in
the pool from then on; a single overrun (what a preempted thread looks like on a loaded machine)
is forgotten once the window has passed, and calls within the budget in between do not forgive
it; a hold no preemption explains (≥ 250 ms) moves it at once. Every class is made fresh per
test: demotion is remembered per class.
"""

import asyncio
import threading
import time
from typing import Any

import pytest

from mcpgym import CallToolAction, CallToolObservation, MCPEnvironment, tool
from mcpgym.runtime import execution as _execution


def inline_env(budget: float | None = 0.02) -> type[MCPEnvironment]:
    class Inline(MCPEnvironment):
        blocking = False
        inline_budget_s = budget

        def __init__(self) -> None:
            self.threads: list[int] = []
            self.log: list[str] = []

        @tool
        def hold(self, seconds: float = 0.0) -> str:
            """Hold the thread it runs on."""
            self.threads.append(threading.get_ident())
            self.log.append("hold:start")
            time.sleep(seconds)
            self.log.append("hold:end")
            return "held"

        @tool
        def other(self) -> str:
            """Answer at once."""
            self.threads.append(threading.get_ident())
            self.log.append("other")
            return "other"

        @tool
        def later(self) -> Any:
            """A sync tool returning an awaitable: awaited under the instance's lock."""

            self.log.append("later:start")

            async def value() -> str:
                await asyncio.sleep(0.01)
                self.log.append("later:end")
                return "later"

            return value()

    return Inline


async def call(env: MCPEnvironment, name: str, **arguments: Any) -> CallToolObservation:
    obs = await env.astep(CallToolAction(tool_name=name, arguments=arguments))
    assert isinstance(obs, CallToolObservation)
    assert obs.error is None, obs.error
    return obs


def ran_inline(env: Any) -> bool:
    return env.threads[-1] == threading.get_ident()


async def test_a_lone_overrun_keeps_the_tool_inline() -> None:
    env = inline_env()()
    env.reset()
    await call(env, "hold", seconds=0.05)  # what a preempted thread looks like
    for _ in range(5):
        await call(env, "hold")
        assert ran_inline(env)


async def test_calls_within_the_budget_do_not_forgive_an_overrun() -> None:
    """An agent that can trigger a tool's slow path must not stall every other session on
    every other call: overrun, fast, overrun is the second overrun, and it moves the tool."""
    env = inline_env()()
    env.reset()
    await call(env, "hold", seconds=0.05)
    for _ in range(3):
        await call(env, "hold")
    await call(env, "hold", seconds=0.05)
    await call(env, "hold")
    assert not ran_inline(env)


async def test_an_overrun_older_than_the_window_is_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [1000.0]
    monkeypatch.setattr(_execution, "_now", lambda: now[0])
    env = inline_env()()
    env.reset()
    for _ in range(3):  # one overrun per window: never two within one
        await call(env, "hold", seconds=0.05)
        assert ran_inline(env)
        now[0] += _execution.STRIKE_WINDOW_S + 1
        await call(env, "hold")
        assert ran_inline(env)
    await call(env, "hold", seconds=0.05)
    now[0] += _execution.STRIKE_WINDOW_S - 1  # the next overrun lands within this one's window
    await call(env, "hold", seconds=0.05)
    await call(env, "hold")
    assert not ran_inline(env)


async def test_two_overruns_move_the_tool_to_the_pool() -> None:
    env = inline_env()()
    env.reset()
    await call(env, "hold", seconds=0.05)
    assert ran_inline(env)
    await call(env, "hold", seconds=0.05)
    assert ran_inline(env)  # the second overrun itself ran inline; from now on: the pool
    await call(env, "hold")
    assert not ran_inline(env)
    await call(env, "other")  # per tool: the other one is still inline
    assert ran_inline(env)


async def test_another_tools_call_does_not_forgive_an_overrun() -> None:
    env = inline_env()()
    env.reset()
    await call(env, "hold", seconds=0.05)
    await call(env, "other")
    await call(env, "hold", seconds=0.05)
    await call(env, "hold")
    assert not ran_inline(env)


async def test_a_hold_no_preemption_explains_moves_the_tool_at_once() -> None:
    env = inline_env()()
    env.reset()
    await call(env, "hold", seconds=0.3)
    await call(env, "hold")
    assert not ran_inline(env)


async def test_no_budget_never_moves_a_tool() -> None:
    env = inline_env(None)()
    env.reset()
    for _ in range(2):
        await call(env, "hold", seconds=0.05)
    await call(env, "hold")
    assert ran_inline(env)


async def test_overruns_of_the_timeout_are_answered_as_timeouts() -> None:
    env = inline_env()()
    env.reset()
    obs = await env.astep(
        CallToolAction(tool_name="hold", arguments={"seconds": 0.05}), timeout_s=0.01
    )
    assert isinstance(obs, CallToolObservation) and obs.error is not None
    assert obs.error.error_type == "timeout"


@pytest.mark.parametrize("first", ["later", "hold"])
async def test_concurrent_calls_of_one_instance_never_overlap(first: str) -> None:
    """The fast path skips the lock only when nothing of the instance runs: a call arriving
    while a sync tool's awaitable (or a pool call) is pending waits for it."""
    env = inline_env()()
    env.reset()
    if first == "hold":  # demote `hold`: it then runs in the pool and holds the lock there
        for _ in range(2):
            await call(env, "hold", seconds=0.05)
    env.log.clear()
    slow = {"seconds": 0.1} if first == "hold" else {}
    await asyncio.gather(call(env, first, **slow), call(env, "other"))
    assert env.log == [f"{first}:start", f"{first}:end", "other"]
