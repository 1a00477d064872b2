"""A warm sandbox's spare: the next run's bubblewrap sandbox, started before the run is asked for.

Starting a sandbox costs bubblewrap's namespaces and mounts, the interpreter's start-up and the
runner's imports — most of a short run's time. A `Sandbox` given `warm_mounts` keeps one spare
started ahead (at construction, after every run, after a reset): a complete, fresh sandbox of
its own (own pid namespace, fresh `/tmp`, the same limits) whose first program, `launcher.py`,
has started Python and waits on stdin. A run that fits (`python FILE ARGS` or `python -c CODE
ARGS` with the sandbox's limits, exactly `warm_mounts` and no extra `env`) is handed to it:
one request on stdin, then the run's own stdin. Every other run starts cold. A spare runs one
program only, then is gone like any run; its wall-time clock starts at the hand-off, its
CPU-time limit counts the launcher's start-up too (a few tens of ms).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .process import Job

#: The launcher's host path and where a spare sees it (read-only).
LAUNCHER = Path(__file__).with_name("launcher.py")
LAUNCHER_DEST = "/.launcher.py"
_PYTHON = ("python", "python3")


@dataclass
class Spare:
    """A started, waiting sandbox and its scratch directory (None without the quota tmpfs)."""

    job: Job
    scratch: Path | None


def request(argv: list[str]) -> bytes | None:
    """The launcher's request for `argv`, or None when a spare cannot run it."""
    if len(argv) < 2 or argv[0] not in _PYTHON:
        return None
    if not all(isinstance(a, str) and "\0" not in a for a in argv):
        return None  # the cold start refuses it
    if argv[1] == "-c":
        if len(argv) < 3:
            return None
        body = ["code", argv[2], *argv[3:]]
    elif argv[1].startswith("-"):
        return None  # interpreter options: only a cold start honours them
    else:
        body = ["file", argv[1], *argv[2:]]
    data = json.dumps(body).encode()
    return len(data).to_bytes(8, "big") + data
