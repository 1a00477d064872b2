"""`mcpgym build`, `mcpgym push` and `mcpgym providers gc`: package environments as container
images, move them through an OCI registry, and clean up what a dead run left.

Registered through the `mcpgym.commands` entry point (`containers =
"mcpgym.servers.cli.containers:register"`). Engines are reached with the `docker` SDK at
`--engine` or `$DOCKER_HOST` (a Podman socket works too).

Examples::

    mcpgym build mcpgym.examples.guess:GuessEnv --tag guess:1
    mcpgym build ./my_env --base mcpgym-base:bookworm --extra calendar
    mcpgym push guess:1 --registry 127.0.0.1:5000
    mcpgym providers gc --dry-run
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["register"]


def _options(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or key.startswith("-"):
            raise ValueError(f"--option expects KEY=VALUE (e.g. max-sessions=64), got {pair!r}")
        out[key] = value
    return out


def _build(args: argparse.Namespace) -> int:
    from mcpgym.providers.base import ProviderError
    from mcpgym.providers.image import BuildSpec, build_image
    from mcpgym.servers.cli.progress import Stages

    what: str = args.what
    is_path = ":" not in what or Path(what).is_dir()
    try:
        spec = BuildSpec(
            target=args.env if is_path else what,
            path=Path(what) if is_path else None,
            tag=args.tag,
            base=args.base,
            mode=args.mode,
            extras=tuple(args.extra),
            options=_options(args.option),
            pip_args=tuple(args.pip_arg),
        )
        if spec.path is not None and not (spec.path / "pyproject.toml").is_file():
            raise ValueError(f"{what}: not MODULE:ATTR and not a folder with a pyproject.toml")
        with Stages("mcpgym build") as stages:
            tag = build_image(spec, engine=args.engine, network=args.network, progress=stages)
    except (ValueError, ProviderError) as exc:
        print(f"mcpgym build: error: {exc}", file=sys.stderr)
        return 2
    print(tag)
    return 0


def _push(args: argparse.Namespace) -> int:
    from mcpgym.providers.base import ProviderError
    from mcpgym.providers.image import push_image

    try:
        ref = push_image(args.image, args.registry, engine=args.engine)
    except ProviderError as exc:
        print(f"mcpgym push: error: {exc}", file=sys.stderr)
        return 2
    print(ref)
    return 0


def _gc(args: argparse.Namespace) -> int:
    from mcpgym.providers.base import ProviderError
    from mcpgym.providers.gc import collect, collect_processes

    verb = "would remove" if args.dry_run else "removed"
    removed = collect_processes(run=args.run, dry_run=args.dry_run)
    for item in removed:  # said at once: an engine that fails below must not hide them
        print(f"{verb} {item}")
    try:
        containers = collect(engine=args.engine, run=args.run, dry_run=args.dry_run)
    except (ProviderError, ImportError) as exc:  # no engine here, or no docker extra
        if args.engine or os.environ.get("DOCKER_HOST"):  # an engine was named: it must answer
            print(f"mcpgym providers gc: error: {exc}", file=sys.stderr)
            return 2
        print(
            f"mcpgym providers gc: no container engine reachable ({exc}); checked processes only",
            file=sys.stderr,
        )
        containers = []
    for item in containers:
        print(f"{verb} {item}")
    if not removed and not containers:
        print("nothing to remove")
    return 0


def register(sub: Any) -> None:
    """Add `build`, `push` and `providers` to the `mcpgym` parser's subparsers."""
    engine_help = "engine socket, e.g. unix:///run/podman/podman.sock (default $DOCKER_HOST)"
    b = sub.add_parser(
        "build",
        help="build a container image for an environment",
        description="Build an image that serves an environment: its package and dependencies in "
        "one virtualenv layer, a non-root user, exec-form CMD, a HEALTHCHECK on /health, and the "
        "mode and options as labels. WHAT is MODULE:ATTR (an importable environment) or PATH (a "
        "project folder with pyproject.toml; the environment from --env or [tool.mcpgym] env).",
    )
    b.add_argument("what", metavar="PATH|MODULE:ATTR")
    b.add_argument("--tag", "-t", default=None, help="image tag (default mcpgym-<module>:latest)")
    b.add_argument(
        "--base", default="python:3.11-slim", help="base image with python3 (python:3.11-slim)"
    )
    b.add_argument("--env", default=None, metavar="MODULE:ATTR", help="environment of a PATH")
    b.add_argument("--mode", choices=["simulation", "production"], default="simulation")
    b.add_argument(
        "--extra", action="append", default=[], help="mcpgym extra to install (repeatable)"
    )
    b.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="`mcpgym serve --KEY VALUE` baked into the CMD, e.g. max-sessions=64 (repeatable)",
    )
    b.add_argument(
        "--pip-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for pip install in the build, e.g. --pip-arg=--index-url=URL",
    )
    b.add_argument("--network", default="host", help="network of the build steps (host)")
    b.add_argument("--engine", default=None, help=engine_help)
    b.set_defaults(func=_build)

    p = sub.add_parser(
        "push",
        help="push an image to an OCI registry",
        description="Tag IMAGE as HOST:PORT/NAME:TAG and push it. Providers pull it back on start.",
    )
    p.add_argument("image", metavar="IMAGE")
    p.add_argument("--registry", required=True, metavar="HOST:PORT")
    p.add_argument("--engine", default=None, help=engine_help)
    p.set_defaults(func=_push)

    prov = sub.add_parser("providers", help="manage what providers started")
    psub = prov.add_subparsers(dest="providers_command", metavar="COMMAND")
    psub.required = True
    g = psub.add_parser(
        "gc",
        help="remove servers, containers, networks and volumes that dead runs left",
        description="Stop the servers the process provider started and remove everything "
        "labelled io.mcpgym.managed whose owner process (on this host) is gone. Live runs are "
        "left alone unless named with --run.",
    )
    g.add_argument(
        "--run", default=None, help="remove this run's resources even if its owner lives"
    )
    g.add_argument("--dry-run", action="store_true", help="list, remove nothing")
    g.add_argument("--engine", default=None, help=engine_help)
    g.set_defaults(func=_gc)
