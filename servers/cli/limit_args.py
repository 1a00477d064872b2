"""`mcpgym serve`'s flags for the limits of issue 26 (results, slow clients, per-principal quotas),
and the descriptor limit a server raises for itself at start (docs/security.md has the table)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_limit_arguments", "limit_settings", "raise_open_files"]


def add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """Add `--max-result-bytes`, `--head-timeout`, `--max-pending-heads`, `--principal-sessions`."""
    p.add_argument(
        "--max-result-bytes",
        type=int,
        default=4 * 1024 * 1024,
        metavar="N",
        help="largest tool result (its JSON) a call answers with; a larger one is a "
        "RESULT_TOO_LARGE tool error (default 4 MiB; 0: no cap)",
    )
    p.add_argument(
        "--head-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="a request head or WebSocket handshake must arrive within this, and a body may "
        "not stall longer (default 10)",
    )
    p.add_argument(
        "--max-pending-heads",
        type=int,
        default=256,
        metavar="N",
        help="connections still sending their head at once; one more closes the oldest "
        "(default 256)",
    )
    p.add_argument(
        "--principal-sessions",
        type=int,
        default=None,
        metavar="N",
        help="MCP and OpenEnv sessions one principal token may hold (default max-sessions / 8)",
    )


def limit_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The `ServerSettings` fields the flags above set."""
    return {
        "max_result_bytes": args.max_result_bytes or None,
        "head_timeout_s": args.head_timeout,
        "max_pending_heads": args.max_pending_heads,
        "principal_sessions": args.principal_sessions,
    }


def raise_open_files() -> int:
    """Raise this process's soft limit on open files to its hard limit; returns the new limit.

    Every connection is a descriptor: at the common soft default of 1024, about a thousand slow
    clients used to deny `/health` to everyone else. Slow heads are bounded
    (`--max-pending-heads`), and the rest of the headroom is the machine's to give.
    """
    try:
        import resource
    except ImportError:  # not on this platform
        return -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 65_536)
    if soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            return soft
        return target
    return soft
