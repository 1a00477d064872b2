"""Calendar Gym: a Google-Calendar-shaped, multi-user environment for tool-using agents.

Serve it with `mcpgym serve calendar_gym:CalendarEnv`, or drive it in-process:

    >>> from mcpgym import CallToolAction
    >>> from calendar_gym import CalendarEnv
    >>> env = CalendarEnv()
    >>> _ = env.reset(seed=1, user="bob@acme.test", scopes=["calendar.readonly"])
    >>> obs = env.step(CallToolAction(tool_name="calendarList_list"))
    >>> obs.result["items"][0]["id"]
    'bob@acme.test'

See docs/calendar_gym.md for the tools, reset options, permissions and error modes, and
docs/calendar_benchmark.md for the task suite (`calendar_gym.tasks`), its graders
(`calendar_gym.tasks.grading`, `calendar_gym.tasks.classify`), the `oracle` and `naive` agents
and the main job, `python -m calendar_gym.bench.demo`.
"""

try:
    import dateutil as _dateutil  # noqa: F401  (recurrence rules)
except ImportError:  # one line, naming the extra, instead of a traceback from deep inside
    raise ModuleNotFoundError(
        "calendar_gym needs the [calendar] extra: pip install 'mcpgym[calendar]'",
        name="dateutil",
    ) from None

from calendar_gym.env import RESET_OPTIONS, CalendarEnv, CalendarState
from calendar_gym.world.errors import CODES, ERROR_MODES, ApiError
from calendar_gym.world.seed import (
    CALENDAR_IDS,
    DEFAULT_NOW,
    EVENT_IDS,
    MAIN_USER,
    WORLD_VERSION,
)
from calendar_gym.world.store import state_hash

__all__ = [
    "CALENDAR_IDS",
    "CODES",
    "DEFAULT_NOW",
    "ERROR_MODES",
    "EVENT_IDS",
    "MAIN_USER",
    "RESET_OPTIONS",
    "WORLD_VERSION",
    "ApiError",
    "CalendarEnv",
    "CalendarState",
    "state_hash",
]
