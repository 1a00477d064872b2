"""An isolated workspace per session for untrusted programs (Linux namespaces via bubblewrap).

>>> from code_gym.sandbox import Sandbox, Limits
>>> with Sandbox(limits=Limits(wall_s=5)) as box:  # doctest: +SKIP
...     box.run(["python", "-c", "print(6 * 7)"]).stdout
'42\\n'

The threat model and the limits are in docs/code_gym_sandbox.md.
"""

from .errors import SandboxBusy, SandboxClosed, SandboxError, SandboxUnavailable, WorkspacePathError
from .gate import RUN_GATE, RunGate
from .limits import KILL_REASONS, Limits, RunResult
from .sandbox import Sandbox

__all__ = [
    "KILL_REASONS",
    "RUN_GATE",
    "Limits",
    "RunGate",
    "RunResult",
    "Sandbox",
    "SandboxBusy",
    "SandboxClosed",
    "SandboxError",
    "SandboxUnavailable",
    "WorkspacePathError",
]
