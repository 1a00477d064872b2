"""The out-of-process bridge: serve an environment of another library from its own virtualenv.

    >>> Served = bridge_environment(                                 # doctest: +SKIP
    ...     "openenv", "my_env:MyEnv", python="/venvs/openenv/bin/python", paths=["src"])
    >>> app = create_app(Served)                                     # doctest: +SKIP

mcpgym starts `worker/bridge_worker.py` under the other venv's Python (which needs only the
standard library and the foreign library), talks to it over a line-delimited JSON protocol on its
stdin / stdout (`worker/bridge_wire.py`, docs/interop.md), and stops it with its process group.
Backends (each module's docstring says what does not map):

- `openenv`: an OpenEnv (0.10 or openenv-core) `Environment` or `MCPEnvironment` class, a
  factory of one, or the app OpenEnv's `create_app` built; served on OpenEnv's own wire
  (`OpenEnvBridgeEnvironment`);
- `verifiers-classic`: a Verifiers 0.3.1 `ToolEnv` / `MultiTurnEnv`, its real rollout driven by a
  client that waits for each action from outside;
- `verifiers-v1`: a Verifiers 0.4.0 `verifiers.v1` taskset at tool level.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from mcpgym.integrations.bridge.env import RESULT_SCHEMA, BridgeEnvironment
from mcpgym.integrations.bridge.inprocess import InProcessWorker
from mcpgym.integrations.bridge.openenv_env import OpenEnvBridgeEnvironment
from mcpgym.integrations.bridge.process import WORKER_SCRIPT, WorkerError, WorkerProcess

__all__ = [
    "BACKENDS",
    "RESULT_SCHEMA",
    "WORKER_SCRIPT",
    "BridgeEnvironment",
    "InProcessWorker",
    "OpenEnvBridgeEnvironment",
    "WorkerError",
    "WorkerProcess",
    "bridge_environment",
]

BACKENDS = ("openenv", "verifiers-classic", "verifiers-v1")


def bridge_environment(
    backend: str,
    target: str,
    *,
    python: str | os.PathLike[str] | None,
    paths: Sequence[str | os.PathLike[str]] = (),
    options: dict[str, Any] | None = None,
    start_timeout_s: float = 60.0,
    call_timeout_s: float = 60.0,
    memory_limit_mb: int | None = None,
    name: str | None = None,
) -> type[BridgeEnvironment]:
    """An mcpgym environment class serving `target` (`MODULE:ATTR`) through a worker.

    Args:
        backend: one of `BACKENDS`.
        target: the foreign environment, imported by the worker: a class (OpenEnv), an
            environment or a `load_environment`-style factory (Verifiers), a taskset or a
            factory of one (Verifiers v1).
        python: the interpreter of the venv holding the foreign library; `None` runs the same
            backend in this process (the library must be importable here: it co-installs).
        paths: extra `sys.path` entries for the worker (where `target`'s module lives).
        options: backend options (see each backend's docstring).
        start_timeout_s: how long the worker may take to load before it is killed.
        call_timeout_s: how long one reset or tool call may take before it is killed.
        memory_limit_mb: each worker's memory budget (`RLIMIT_DATA`, so one session's worker
            and whatever it starts); past it that session ends with reason `memory`.
        name: the class name (default from the target).

    Raises:
        ValueError: an unknown backend, a target that is not `MODULE:ATTR`, or no such Python.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown bridge backend {backend!r}; one of {', '.join(BACKENDS)}")
    module, sep, attr = target.partition(":")
    if not (module and sep and attr):
        raise ValueError(f"bridge target {target!r} is not MODULE:ATTR")
    if python is None:
        _check_importable(backend)
    elif not os.access(python, os.X_OK):
        raise ValueError(f"the worker's Python {str(python)!r} is not an executable file")
    if start_timeout_s <= 0 or call_timeout_s <= 0:
        raise ValueError("bridge timeouts must be positive")
    if memory_limit_mb is not None and memory_limit_mb < 16:
        raise ValueError("a bridge memory limit below 16 MiB cannot start a Python worker")
    attrs: dict[str, Any] = {
        "backend": backend,
        "target": target,
        "python": "" if python is None else str(python),
        "paths": tuple(str(p) for p in paths),
        "options": dict(options or {}),
        "start_timeout_s": float(start_timeout_s),
        "call_timeout_s": float(call_timeout_s),
        "memory_limit_mb": memory_limit_mb,
        "__doc__": f"{target} ({backend}) served through the mcpgym bridge.",
        "__module__": __name__,
    }
    cls_name = name or attr.rsplit(".", 1)[-1]
    if backend == "openenv":  # OpenEnv's own wire (openenv_env.py)
        return type(cls_name, (OpenEnvBridgeEnvironment,), attrs)
    return type(cls_name, (BridgeEnvironment,), attrs)


_LIBRARIES = {"openenv": "openenv", "verifiers-classic": "verifiers", "verifiers-v1": "verifiers"}


def _check_importable(backend: str) -> None:
    import importlib.util

    library = _LIBRARIES[backend]
    if importlib.util.find_spec(library) is None:
        raise ValueError(
            f"{library} is not installed beside mcpgym: install it here to serve in process, "
            "or give the Python of a venv that has it (--python)"
        )
