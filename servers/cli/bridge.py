"""`mcpgym serve MODULE:ATTR --bridge BACKEND --python PY`: serve a foreign environment through
the out-of-process bridge (`mcpgym.integrations.bridge`). `serve` calls the two functions here;
the module is imported only when `--bridge` is given."""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_bridge_arguments", "bridge_target"]

_BACKENDS = ("openenv", "verifiers-classic", "verifiers-v1")


def add_bridge_arguments(p: argparse.ArgumentParser) -> None:
    """The `--bridge*` options of `mcpgym serve`."""
    g = p.add_argument_group(
        "bridge",
        "MODULE:ATTR is imported by a worker under another virtualenv's Python (--python), which "
        "needs only that library, not mcpgym; without --python it is served in this process "
        "(the library must be installed beside mcpgym); see docs/interop.md",
    )
    g.add_argument(
        "--bridge",
        choices=_BACKENDS,
        default=None,
        metavar="BACKEND",
        help="serve MODULE:ATTR through a worker: openenv (an OpenEnv Environment class, "
        "factory or create_app app; option 'action': MODULE:ATTR of its action class), "
        "verifiers-classic (a Verifiers 0.3 ToolEnv/MultiTurnEnv or its loader), verifiers-v1 "
        "(a Verifiers 0.4 v1 taskset or its loader)",
    )
    g.add_argument(
        "--python",
        metavar="PATH",
        help="the worker venv's interpreter (with --bridge; default: serve in this process)",
    )
    g.add_argument(
        "--bridge-path",
        action="append",
        default=[],
        metavar="DIR",
        help="sys.path entry for the worker, where MODULE lives (repeatable; default .)",
    )
    g.add_argument(
        "--bridge-options",
        default="{}",
        metavar="JSON",
        help="backend options as a JSON object, e.g. '{\"max_turns\": 8}'",
    )
    g.add_argument(
        "--bridge-start-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long the worker may take to load (default 60)",
    )
    g.add_argument(
        "--bridge-call-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long one reset or tool call may take in the worker (default 60)",
    )
    g.add_argument(
        "--bridge-memory-mb",
        type=int,
        default=None,
        metavar="MIB",
        help="each session's worker memory budget (RLIMIT_DATA); past it only that session "
        "ends (default: none)",
    )


def bridge_target(args: argparse.Namespace) -> Any:
    """The environment class `serve` serves for `--bridge`; `ValueError` for a usage error."""
    import os

    from mcpgym.errors import MCPGymError
    from mcpgym.integrations.bridge import bridge_environment

    try:
        options = json.loads(args.bridge_options)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--bridge-options is not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise ValueError("--bridge-options must be a JSON object")
    paths = [os.path.abspath(p) for p in (args.bridge_path or ["."])]
    cls = bridge_environment(
        args.bridge,
        args.target,
        python=args.python or None,
        paths=paths,
        options=options,
        start_timeout_s=args.bridge_start_timeout,
        call_timeout_s=args.bridge_call_timeout,
        memory_limit_mb=args.bridge_memory_mb,
    )
    try:  # load once now: a target that cannot load fails before `serve` says it is up
        cls.check_loads(keep=True)  # and kept warm for the first session
    except MCPGymError as exc:
        raise ValueError(
            f"{args.target} cannot be served with --bridge {args.bridge}: {exc}"
        ) from None
    return cls
