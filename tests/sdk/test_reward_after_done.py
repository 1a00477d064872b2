"""The terminal reward is earned once: a step after the one that reported `done` scores 0, so a
client that sums per-call rewards (ORS's, a custom loop) does not count the end again. Both the
`reward()` hook and a rubric, sync and async steps, and Calendar Gym over the WebSocket."""

from __future__ import annotations

from calendar_gym import CalendarEnv
from calendar_gym.tasks import get_task
from calendar_gym.tasks.values import entity_value, resolve
from helpers.finishers import Finisher, RubricFinisher
from helpers.server import run_server
from mcpgym import CallToolAction, SyncEnvClient
from mcpgym.servers import create_app


def _call(name: str) -> CallToolAction:
    return CallToolAction(tool_name=name, arguments={})


async def test_steps_after_done_earn_nothing() -> None:
    for cls in (Finisher, RubricFinisher):
        env = cls()
        env.reset()
        assert env.step(_call("end")).reward == 1.0
        after = env.step(_call("end"))
        assert after.done and after.reward == 0.0, cls
        assert (await env.astep(_call("end"))).reward == 0.0
        env.reset()  # a new episode earns again
        assert (await env.astep(_call("end"))).reward == 1.0


def test_calendar_gym_counts_its_terminal_reward_once() -> None:
    """The gold plan of a task scores 1 at `finish`; the calls after it score 0."""
    task = get_task("t1-create-haircut", "2")
    with run_server(create_app(CalendarEnv)) as server, SyncEnvClient(server.url) as client:
        client.reset(task=task.id, suite="2")
        rewards = []
        for step in task.plan:
            args = resolve(step.args, lambda ref: entity_value(task, ref), {})
            rewards.append(client.step(CallToolAction(tool_name=step.tool, arguments=args)))
        assert rewards[-1].done and rewards[-1].reward == 1.0
        for name in ("calendarList_list", "finish"):
            again = client.step(CallToolAction(tool_name=name, arguments={}))
            assert again.done and again.reward == 0.0, (name, again)
