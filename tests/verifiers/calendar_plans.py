"""Calendar Gym's gold plans as the calls a model would make: each task's oracle played on an
in-process `CalendarEnv` reset with the task's split and index, its calls recorded (the worlds are
deterministic by split and index, so the same calls replay on a served episode of that task)."""

from __future__ import annotations

from typing import Any

__all__ = ["gold_calls", "task_prompt"]


def gold_calls(split: str, index: int) -> list[list[Any]]:
    """`[[tool, arguments], ...]` of the task's gold plan, `finish` last."""
    from calendar_gym import CalendarEnv
    from calendar_gym.agents.oracle import oracle_play
    from calendar_gym.tasks import get_task
    from calendar_gym.tasks.taskset import CALENDAR_TASKS
    from mcpgym import CallToolAction
    from mcpgym.types import StepResult

    row = CALENDAR_TASKS.load_task(split, index)
    env = CalendarEnv()
    env.reset(split=split, index=index)
    play, calls = oracle_play(get_task(row["task"], row["reset"]["suite"])), []
    action = next(play)
    while True:
        calls.append([action["tool_name"], action["arguments"]])
        obs = env.step(CallToolAction(tool_name=action["tool_name"], arguments=action["arguments"]))
        try:
            action = play.send(StepResult(observation=obs, reward=obs.reward, done=obs.done))
        except StopIteration:
            return calls


def task_prompt(split: str, index: int) -> str:
    """The prompt of the task's row (what the export puts in the generated taskset)."""
    from calendar_gym.tasks.taskset import CALENDAR_TASKS

    return str(CALENDAR_TASKS.load_task(split, index)["prompt"])
