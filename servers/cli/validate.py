"""`mcpgym validate` and `mcpgym list`, registered through the `mcpgym.commands` entry points.

    mcpgym validate .                               # this folder's manifest, every level
    mcpgym validate mypkg.env:MyEnv --level static  # just the manifest and the code
    mcpgym validate . --url http://127.0.0.1:8000 --json
    mcpgym validate calendar --gate success=0.05 --gate positional.success=0.2
    mcpgym list                                     # installed environments

Exit codes of `validate`: 0 ok, 1 a check failed, 2 usage or bad manifest, 3 validator error,
4 a fail-severity check was skipped.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["parse_gates", "register", "register_list", "run_list", "run_validate"]

_EPILOG = """\
TARGET is a folder (or manifest file) holding mcpgym.yaml or openenv.yaml, MODULE:ATTR of an
environment class, or the name of an installed environment (`mcpgym list`). Levels: static
(manifest and code), runtime (served for real on 127.0.0.1), semantic (oracle, floor gap,
leakage, verifier determinism; no model needed); each includes the previous ones.

Exit codes: 0 ok, 1 a check failed, 2 usage or bad manifest, 3 validator error, 4 a
fail-severity check was skipped. Every check is listed in docs/validation.md.
"""


def register(sub: Any) -> None:
    """Add `validate` to the `mcpgym` parser's subparsers."""
    p = sub.add_parser(
        "validate",
        help="check an environment: manifest, served behaviour, reward semantics",
        description="Validate an environment at RFC 008 levels 1-3.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", nargs="?", metavar="PATH|MODULE:ATTR|NAME")
    p.add_argument("--url", help="validate the server at this URL instead of starting one")
    p.add_argument(
        "--level",
        choices=["static", "runtime", "semantic"],
        default="semantic",
        help="how far to go (default semantic: everything)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the validator's random choices")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--check", action="append", metavar="NAME", help="run only this check")
    p.add_argument(
        "--tasks",
        action="append",
        metavar="SET",
        help="play this task set of the manifest (repeatable; default every set not marked "
        "validate: false)",
    )
    p.add_argument(
        "--gate",
        action="append",
        metavar="METRIC=VALUE",
        help="a gamer-panel threshold replacing the manifest's: success, traps, paired, reward "
        "or collateral, for every gamer or one (GAMER.METRIC, e.g. positional.success=0.2); "
        "VALUE is a fraction, or 'none' to leave it ungated (repeatable)",
    )
    p.set_defaults(func=run_validate)


def parse_gates(items: list[str] | None) -> dict[str, float | None]:
    """`--gate` values as `{METRIC or GAMER.METRIC: fraction or None}`; raises `ValueError`.

    Example:
        >>> parse_gates(["success=0.05", "positional.success=none"])
        {'success': 0.05, 'positional.success': None}
    """
    out: dict[str, float | None] = {}
    for item in items or []:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--gate takes METRIC=VALUE, not {item!r}")
        if raw.strip().lower() == "none":
            out[name] = None
            continue
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"--gate {name}: {raw!r} is not a number or 'none'") from None
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"--gate {name}: {value:g} is not a fraction between 0 and 1")
        out[name] = value
    return out


def run_validate(args: argparse.Namespace) -> int:
    """Run `mcpgym validate`; returns the exit code."""
    from mcpgym.servers.cli.progress import Stages
    from mcpgym.validate import planned, validate

    if not args.target and not args.url:
        print("mcpgym validate: error: give a TARGET or --url", file=sys.stderr)
        return 2
    try:
        gates = parse_gates(args.gate)
        with Stages("mcpgym validate", total=len(planned(args.level, args.check))) as stages:
            report = validate(
                args.target,
                url=args.url,
                level=args.level,
                seed=args.seed,
                only=args.check,
                tasks=args.tasks,
                gates=gates,
                progress=stages,
            )
    except ValueError as exc:
        print(f"mcpgym validate: error: {exc}", file=sys.stderr)
        return 2
    print(report.to_json() if args.json else report.to_text())
    return report.exit_code


def register_list(sub: Any) -> None:
    """Add `list` to the `mcpgym` parser's subparsers."""
    p = sub.add_parser(
        "list",
        help="list installed environments (entry point group mcpgym.environments)",
        description="List the environments installed packages register.",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run_list)


def run_list(args: argparse.Namespace) -> int:
    """Run `mcpgym list`."""
    import json

    from mcpgym.discovery import list_environments

    envs = list_environments()
    if args.json:
        rows = [
            {
                "name": e.name,
                "entry_point": e.entry_point,
                "version": e.version,
                "description": e.description,
                "manifest_problem": e.manifest_problem,
            }
            for e in envs
        ]
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title="mcpgym environments")
    for col in ("name", "version", "entry point", "description"):
        table.add_column(col)
    for e in envs:
        table.add_row(e.name, e.version, e.entry_point, e.description or (e.manifest_problem or ""))
    Console().print(table)
    return 0
