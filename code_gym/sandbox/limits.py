"""What one run may use (`Limits`) and what it did (`RunResult`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

#: The `RunResult.killed` reasons.
KILL_REASONS = ("wall_time", "cpu_time", "memory", "output", "processes")


@dataclass(frozen=True)
class Limits:
    """Resource limits of a run; every field must be positive.

    `cpu_s` is CPU time per process (RLIMIT_CPU, whole seconds, rounded up), `wall_s` the
    wall-clock time of the whole run, `memory_mb` the address space per process (RLIMIT_AS),
    `processes` the number of live processes and threads of the sandbox at once,
    `file_size_mb` the largest file a process may write (RLIMIT_FSIZE), `output_bytes` what is
    kept of stdout and of stderr each (more stops the run), `workspace_mb` the size of the
    workspace and of the private `/tmp` each.

    >>> Limits(wall_s=5).cpu_s
    10
    """

    cpu_s: float = 10
    wall_s: float = 20
    memory_mb: int = 512
    processes: int = 64
    file_size_mb: int = 16
    output_bytes: int = 65_536
    workspace_mb: int = 64

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"Limits.{f.name} must be a number, got {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"Limits.{f.name} must be positive and finite, got {value!r}")


@dataclass(frozen=True)
class RunResult:
    """The outcome of one run.

    `exit_code` is the program's exit status (128 + N when signal N ended it, as a shell
    reports it), or None when the sandbox stopped the run; `killed` says why the sandbox
    stopped or a limit ended it: None, "wall_time", "cpu_time", "memory", "output" or
    "processes" ("memory" and "processes" are read from the program's own failure, best effort).
    stdout and stderr are decoded as UTF-8 (undecodable bytes replaced) and hold at most
    `Limits.output_bytes` bytes each; `*_truncated` says more was written.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    duration_s: float
    stdout_truncated: bool
    stderr_truncated: bool
    killed: str | None
