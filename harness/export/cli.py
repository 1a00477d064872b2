"""`mcpgym export verifiers URL --out DIR`, registered through the `mcpgym.commands` entry point.

The parser only: the package writer (harness/export/verifiers.py, with httpx and the client) is
imported when the command runs, so `mcpgym --help` does not pay for it.
"""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from typing import Any

__all__ = ["register"]


def _run(args: argparse.Namespace) -> int:
    is_url = args.url.startswith(("http://", "https://"))
    if not is_url and "://" in args.url:
        raise SystemExit(f"mcpgym export verifiers: URL must be http(s)://..., got {args.url!r}")
    url = (args.url if is_url else args.server_url).rstrip("/")
    tools_url = args.tools_url or f"{url}/mcp"
    command = "mcpgym export verifiers " + shlex.join(
        [args.url, "--out", str(args.out), "--name", args.name, "--tools-url", tools_url]
        + ([] if is_url else ["--server-url", url])
        + [f"--split={s}" for s in args.split or []]
        + [f"--seed={n}" for n in args.seed or []]
    )
    seeds = tuple(args.seed or [1])
    from mcpgym.harness.export.verifiers import (
        ExportError,
        collect_tasks,
        tasks_of_target,
        write_package,
    )

    try:
        if is_url:
            tasks = collect_tasks(url, splits=args.split, seeds=seeds, token=args.token)
        else:
            tasks = tasks_of_target(args.url, args.split, seeds)
        module = write_package(
            Path(args.out),
            name=args.name,
            url=url,
            tools_url=tools_url,
            tasks=tasks,
            command=command,
        )
    except ExportError as err:
        raise SystemExit(f"mcpgym export verifiers: {err}") from None
    print(f"wrote {module} ({len(tasks)} tasks); install with: pip install {args.out}")
    return 0


def register(sub: Any) -> None:
    """Add the `export` subcommand (target: `verifiers`) to the `mcpgym` parser."""
    p = sub.add_parser(
        "export",
        help="write another library's environment package pointing at an mcpgym server",
        description="Write a package that lets another environment library use an mcpgym server.",
    )
    targets = p.add_subparsers(dest="target", metavar="TARGET", required=True)
    v = targets.add_parser(
        "verifiers",
        help="a verifiers 0.4.0 v1 taskset (each rollout plays and is scored on its own episode)",
        description="Write a verifiers 0.4.0 `verifiers.v1` taskset package: its tasks are the "
        "server's task set (read now); each rollout opens an episode reset with its task's "
        "options on the simulation server, plays it over spec MCP (/mcp?episode=ID) and is "
        "scored by that episode's own reward. Install it into a verifiers venv "
        "(`pip install DIR`) and use the package name as the taskset id.",
    )
    v.add_argument(
        "url",
        metavar="URL_OR_TARGET",
        help="simulation server base URL (http://127.0.0.1:8000), or an environment "
        "(MODULE:ATTR or installed name) served here just to read its tasks",
    )
    v.add_argument(
        "--server-url",
        default="http://127.0.0.1:8000",
        help="with a TARGET: where the package will find it served (default: %(default)s)",
    )
    v.add_argument("--out", required=True, type=Path, help="directory to write the package into")
    v.add_argument(
        "--name", default="mcpgym_taskset", help="package/taskset id (default: %(default)s)"
    )
    v.add_argument(
        "--tools-url",
        help="the same server's spec MCP endpoint as the harness reaches it (default: URL/mcp)",
    )
    v.add_argument("--split", action="append", help="export only this split (repeatable)")
    v.add_argument(
        "--seed",
        action="append",
        type=int,
        help="without a task set: one task per seed (repeatable; default: 1)",
    )
    v.add_argument(
        "--token",
        default=os.environ.get("MCPGYM_TOKEN"),
        help="bearer token for reading the server's tasks (default: $MCPGYM_TOKEN)",
    )
    v.set_defaults(func=_run)
