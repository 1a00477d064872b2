"""The instruction an agent gets for a task: who it is, when it is, the request, how to finish.

The explicit preamble gives ids and RFC 3339; the natural one names and local time. The task set
(`calendar_gym.tasks.taskset`) and the evaluation specs (`calendar_gym.suite`) both use it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from calendar_gym.tasks.model import Phrasing, Task
from calendar_gym.world.seed import USERS
from calendar_gym.world.timeutil import format_in_zone, parse_rfc3339

__all__ = ["prompt"]

_FINISH_RULES = (
    "When you are done, call finish(status, summary): status 'done' if you completed the task, "
    "'cannot_complete' if it cannot be done (for example you lack permission or it does not "
    "exist), 'needs_clarification' if the request is ambiguous. Do not guess."
)


def _person(email: str) -> dict[str, Any]:
    return next((u for u in USERS if u["email"] == email), {"name": email, "time_zone": "UTC"})


def prompt(task: Task, phrasing: Phrasing) -> str:
    """The instruction for `task` in `phrasing`: who you are, when it is, the request, how to
    finish. The explicit preamble gives ids and RFC 3339; the natural one names and local time."""
    user = _person(task.user)
    now = parse_rfc3339(task.now)
    if phrasing == "explicit":
        local = format_in_zone(now, user["time_zone"])
        head = (
            f"You are acting as {task.user} (time zone {user['time_zone']}). Current time: {local}."
        )
    else:
        moment = datetime.fromisoformat(format_in_zone(now, user["time_zone"]))
        city = user["time_zone"].split("/")[-1].replace("_", " ")
        clock = moment.strftime("%I:%M %p").lstrip("0")
        date = f"{moment:%A, %B} {moment.day}, {moment.year}"
        head = f"You are {user['name']}. It is {date}, {clock} in {city}."
    return f"{head}\n\n{task.prompts[phrasing]}\n\n{_FINISH_RULES}"
