"""The `mcpgym` command line: `serve` here; other packages add subcommands through the
`mcpgym.commands` entry-point group (a callable taking the argparse subparsers object)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any

__all__ = ["build_parser", "main"]

log = logging.getLogger("mcpgym")


def _serve(args: argparse.Namespace) -> int:
    from mcpgym.servers.factory import load_target
    from mcpgym.servers.settings import ServerSettings

    try:
        if args.bridge:  # imported by a worker under another venv's Python, not here
            from mcpgym.servers.cli_bridge import bridge_target

            target = bridge_target(args)
        else:
            target = load_target(args.target)
        if args.ors:  # an ORS environment class, served unchanged through the ORS adapter
            from mcpgym.integrations.ors import ors_environment

            try:
                target = ors_environment(target)
            except (ImportError, TypeError) as exc:
                raise ValueError(f"--ors: {exc} (pip install 'mcpgym[ors]')") from None
        principals = _load_principals(args.principals) if args.principals else {}
        if args.stdio:
            if args.mode == "simulation":
                raise ValueError("--stdio serves the production face only (episodes go over /ws)")
            from mcpgym.servers.stdio import serve_stdio

            return serve_stdio(
                target, max_line_bytes=args.max_line_bytes, timeout_s=args.step_timeout
            )
        settings = ServerSettings(
            mode=args.mode or "simulation",
            max_sessions=args.max_sessions,
            idle_timeout_s=args.idle_timeout,
            max_frame_bytes=args.max_frame_bytes,
            step_timeout_s=args.step_timeout,
            token=args.token,
            production_ws=args.production_ws,
            allowed_origins=tuple(args.allowed_origin),
            allowed_hosts=tuple(args.allowed_host),
            principals=principals,
            web=args.web,
            web_tasks=args.web_tasks,
            max_header_bytes=args.max_header_bytes,
            max_headers=args.max_headers,
            max_line_bytes=args.max_line_bytes,
            max_mcp_sessions=args.max_mcp_sessions,
            worker_threads=args.workers,
            ors_wire=args.ors_wire,
        )
    except ValueError as exc:
        print(f"mcpgym serve: error: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    from mcpgym.servers.app import create_app

    try:
        app = create_app(target, mode=settings.mode, settings=settings)
    except ValueError as exc:
        print(f"mcpgym serve: error: {exc}", file=sys.stderr)
        return 2
    from mcpgym.servers import gc_tuning
    from mcpgym.servers.limits import uvicorn_options

    gc_tuning.tune(app)  # fewer, cheaper collections at many sessions (gc_tuning's docstring)

    port = args.port or _free_port(args.host)
    print(startup_line(target, settings, args.host, port), file=sys.stderr, flush=True)
    uvicorn.run(
        app,
        host=args.host,
        port=port,
        log_level=args.log_level,
        **uvicorn_options(settings),
        ws_ping_interval=20.0,
        ws_ping_timeout=20.0,
        timeout_graceful_shutdown=5,
        root_path=args.root_path,
    )
    return 0


def startup_line(target: Any, settings: Any, host: str, port: int) -> str:
    """The one line `mcpgym serve` prints at start: where, which mode, what is exposed."""
    name = getattr(target, "__name__", type(target).__name__)
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    if settings.mode == "simulation":
        routes = ["/ws", "/reset", "/step", "/state", "/mcp"]
        if getattr(settings, "ors_wire", False):
            routes.append("ORS wire (/create, /{env}/call)")
    else:
        routes = ["/mcp"] + (["/ws"] if settings.production_ws else [])
    specs: dict[str, Any] = getattr(target, "tool_specs", {}) if isinstance(target, type) else {}
    tools = sorted(n for n, spec in specs.items() if spec.visible_in(settings.mode))
    parts = [f"mcpgym serve: {name} ({settings.mode}) at {url}", " ".join(routes) + " /health"]
    if tools:
        parts.append("tools: " + ", ".join(tools))
    if settings.token or settings.principals:
        parts.append("bearer token required")
    return "; ".join(parts)


def _free_port(host: str) -> int:
    """A port free on `host` now (for `--port 0`: the start-up line names the real one)."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _load_principals(path: str) -> dict[str, dict[str, Any]]:
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read principals file {path!r}: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{path}: expected a JSON object mapping token -> reset options")
    return data


def _add_serve(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve an environment over HTTP, WebSocket and MCP",
        description="Serve an environment. TARGET is MODULE:ATTR naming an Environment class or a "
        "zero-argument factory, e.g. mcpgym.examples.guess:GuessEnv.",
    )
    p.add_argument("target", metavar="MODULE:ATTR")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument(
        "--mode",
        choices=["simulation", "production"],
        default=None,
        help="simulation (default; trainer owns episodes) or production (real MCP service; "
        "the only mode of --stdio)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=1024,
        help="concurrent sessions (default 1024: a trainer's rollout batch of 500+ sessions fits)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="close sessions idle this long (default 600)",
    )
    p.add_argument(
        "--max-frame-bytes",
        type=int,
        default=4 * 1024 * 1024,
        help="largest WebSocket frame or HTTP body (default 4 MiB)",
    )
    p.add_argument(
        "--step-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="default per-step timeout (default none)",
    )
    p.add_argument(
        "--max-header-bytes",
        type=int,
        default=32 * 1024,
        help="largest request head, request line + headers (default 32 KiB; 431 beyond)",
    )
    p.add_argument(
        "--max-headers", type=int, default=100, help="most headers per request (default 100)"
    )
    p.add_argument(
        "--max-line-bytes",
        type=int,
        default=4 * 1024 * 1024,
        help="longest stdio line, one JSON-RPC message (default 4 MiB)",
    )
    p.add_argument(
        "--max-mcp-sessions",
        type=int,
        default=None,
        help="concurrent /mcp sessions, a quota apart from /ws (default: --max-sessions)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="threads running sync environment code (default min(32, cpus + 4)); a timed-out "
        "call leaves the pool, which replaces its thread",
    )
    p.add_argument(
        "--token",
        default=None,
        help="the operator token: required on /ws (and on /mcp unless --principals is given)",
    )
    p.add_argument(
        "--production-ws",
        action="store_true",
        help="in production mode also serve /ws (requires --token)",
    )
    p.add_argument(
        "--stdio",
        action="store_true",
        help="serve the production tools as MCP over stdin/stdout instead of HTTP",
    )
    p.add_argument(
        "--principals",
        metavar="FILE",
        default=None,
        help="JSON file mapping bearer token -> reset options; each principal gets its own "
        "production instance (implies bearer auth)",
    )
    p.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="browser Origin to accept besides localhost (repeatable)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST",
        help="Host header to accept besides loopback, e.g. example.com:8000 (repeatable)",
    )
    p.add_argument(
        "--web",
        action="store_true",
        help="serve a browser UI at /web where a person plays the environment as an agent would",
    )
    p.add_argument(
        "--web-tasks",
        metavar="MODULE:ATTR",
        default=None,
        help="episode specs the web UI offers to play (e.g. calendar_gym.suite:specs)",
    )
    p.add_argument(
        "--root-path",
        default="",
        metavar="PREFIX",
        help="path prefix a reverse proxy serves the app under, e.g. /gym (default none)",
    )
    p.add_argument(
        "--ors",
        action="store_true",
        help="MODULE:ATTR is an ORS environment class (ors.Environment; needs mcpgym[ors])",
    )
    from mcpgym.servers.cli_bridge import add_bridge_arguments

    add_bridge_arguments(p)
    p.add_argument(
        "--ors-wire",
        action="store_true",
        help="also speak the ORS wire protocol (ORS and openreward clients: /create_session, "
        "/create, /{env}/call, ...); simulation mode only",
    )
    p.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    p.set_defaults(func=_serve)


_BUILTIN_COMMANDS = frozenset({"serve"})


def build_parser(plugins: bool = True) -> argparse.ArgumentParser:
    """The full parser, including subcommands contributed by installed packages (`plugins`)."""
    parser = argparse.ArgumentParser(
        prog="mcpgym",
        description="Author, serve and evaluate tool-using environments for agents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_serve(sub)
    for ep in entry_points(group="mcpgym.commands") if plugins else ():
        try:
            ep.load()(sub)
        except Exception as exc:  # a broken plugin must not take the CLI down
            log.warning("could not load mcpgym command %r: %s", ep.name, exc)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `mcpgym` console script."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    # A built-in command needs no plugin: loading them imports their packages (the harness's
    # `eval` pulls in the `mcp` package: +1.2 s and +33 MB on every `mcpgym serve`).
    builtin = bool(argv) and argv[0] in _BUILTIN_COMMANDS
    args = build_parser(plugins=not builtin).parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
