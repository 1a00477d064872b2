"""`mcpgym serve`: its options, the start-up line, the operator token, the owner watch, and the
run itself (HTTP and WebSocket through uvicorn, or MCP over stdio)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import traceback
from typing import Any

__all__ = ["TOKEN_ENV", "register", "startup_line"]

log = logging.getLogger("mcpgym")


def _serve(args: argparse.Namespace) -> int:
    from mcpgym.servers.cli.limit_args import limit_settings, raise_open_files
    from mcpgym.servers.factory import StartupFailure, load_target, probe_target, untyped_warnings
    from mcpgym.servers.guards.principals import load_principals
    from mcpgym.servers.settings import ServerSettings

    try:
        if args.bridge:  # imported by a worker under another venv's Python, not here
            from mcpgym.servers.cli.bridge import bridge_target

            target = bridge_target(args)
        else:
            target = load_target(args.target)
        if args.ors:  # an ORS environment class, served unchanged through the ORS adapter
            from mcpgym.integrations.ors import ors_environment

            try:
                target = ors_environment(target)
            except (ImportError, TypeError) as exc:
                raise ValueError(f"--ors: {exc} (pip install 'mcpgym[ors]')") from None
        principals = load_principals(args.principals) if args.principals else {}
        if args.stdio and args.mode == "simulation":
            raise ValueError("--stdio serves the production face only (episodes go over /ws)")
        mode = "production" if args.stdio else args.mode or "simulation"
        if not args.bridge:  # a bridge target starts a worker: it reports its own failure
            probe_target(target, mode)
    except ValueError as exc:
        print(f"mcpgym serve: error: {exc}", file=sys.stderr)
        return 2
    except StartupFailure as exc:
        if args.debug and exc.__cause__ is not None:
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        print(f"mcpgym serve: error: {exc}", file=sys.stderr)
        return 3
    for warning in untyped_warnings(target):
        print(f"mcpgym serve: warning: {warning}", file=sys.stderr)
    _log_level(args.log_level)
    if args.stdio:
        from mcpgym.servers.mcp.stdio import serve_stdio

        return serve_stdio(
            target,
            max_line_bytes=args.max_line_bytes,
            timeout_s=args.step_timeout,
            debug=args.debug,
        )
    try:
        settings = ServerSettings(
            mode=mode,
            max_sessions=args.max_sessions,
            idle_timeout_s=args.idle_timeout,
            max_frame_bytes=args.max_frame_bytes,
            step_timeout_s=args.step_timeout,
            token=_operator_token(args),
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
            debug=args.debug,
            session_memory_mb=args.session_memory_mb,
            **limit_settings(args),
        )
        from mcpgym.servers.app import create_app

        app = create_app(target, mode=settings.mode, settings=settings)
    except ValueError as exc:
        print(f"mcpgym serve: error: {exc}", file=sys.stderr)
        return 2
    from mcpgym.servers.cli.listen import BoundServer, bind, bind_problem

    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        print(f"mcpgym serve: error: {bind_problem(args.host, args.port, exc)}", file=sys.stderr)
        return 4
    from mcpgym.servers import gc_tuning
    from mcpgym.servers.guards.limits import uvicorn_options

    gc_tuning.tune(app)  # fewer, cheaper collections at many sessions (gc_tuning's docstring)
    raise_open_files()  # every connection is a descriptor (servers/cli/limit_args.py)
    port = int(sock.getsockname()[1])
    import uvicorn

    _watch_owner()  # a provider-started server dies with its owner
    config = uvicorn.Config(
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
    # bound already: the line is true when printed (connections wait in the backlog)
    print(startup_line(target, settings, args.host, port), file=sys.stderr, flush=True)
    server = BoundServer(config)
    with sock:
        server.run(sockets=[sock])
    return 0 if server.started else 3


def _log_level(name: str) -> None:
    """`--log-level` for mcpgym's own loggers too (uvicorn sets only its own)."""
    logging.getLogger("mcpgym").setLevel(name.upper())


TOKEN_ENV = "MCPGYM_OPERATOR_TOKEN"
"""The environment variable `mcpgym serve` reads the operator token from (unless `--token` or
`--token-file` is given); it is removed from the environment once read, so no child inherits it."""


def _operator_token(args: argparse.Namespace) -> str | None:
    """The operator token from `--token`, `--token-file` or `$MCPGYM_OPERATOR_TOKEN`, in that
    order; `ValueError` for two sources at once, an unreadable file or an empty token."""
    from_env = os.environ.pop(TOKEN_ENV, None)
    if args.token is not None and args.token_file is not None:
        raise ValueError("give the operator token once: --token or --token-file")
    if args.token_file is not None:
        try:
            with open(args.token_file, encoding="utf-8") as fh:
                token = fh.read().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"cannot read --token-file {args.token_file!r}: {exc}") from None
        where = f"--token-file {args.token_file!r}"
    elif args.token is not None:
        token, where = args.token, "--token"
    elif from_env is not None:
        token, where = from_env.strip(), f"${TOKEN_ENV}"
    else:
        return None
    if not token:
        raise ValueError(f"the operator token from {where} is empty")
    return token


def _watch_owner() -> None:
    """A server a provider started (`MCPGYM_OWNER` set) shuts down when that owner is gone:
    SIGTERM to itself (uvicorn's graceful shutdown closes the sessions), and if that has not
    ended the process within 15 s, a hard exit."""
    from mcpgym.runtime.proctree import OWNER_ENV, watch_owner

    def gone() -> None:
        log.warning("mcpgym serve: the process that started this server is gone; stopping")
        deadline = threading.Timer(15.0, os._exit, args=(3,))
        deadline.daemon = True
        deadline.start()
        os.kill(os.getpid(), signal.SIGTERM)

    if owner := os.environ.get(OWNER_ENV):
        watch_owner(owner, gone)


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
    if getattr(settings, "web", False):
        routes.append("/web")
    specs: dict[str, Any] = getattr(target, "tool_specs", {}) if isinstance(target, type) else {}
    tools = sorted(n for n, spec in specs.items() if spec.visible_in(settings.mode))
    parts = [f"mcpgym serve: {name} ({settings.mode}) at {url}", " ".join(routes) + " /health"]
    if tools:
        parts.append("tools: " + ", ".join(tools))
    if settings.token or settings.principals:
        parts.append("bearer token required")
    return "; ".join(parts)


def register(sub: Any) -> None:
    """Add the `serve` subcommand to the `mcpgym` parser."""
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
        help="the operator token: required on /ws (and on /mcp unless --principals is given); "
        "visible in the process list: prefer --token-file or $" + TOKEN_ENV,
    )
    p.add_argument(
        "--session-memory-mb",
        type=int,
        default=None,
        metavar="MIB",
        help="end a session whose environment holds more than this (default: no budget; "
        "see docs/security.md for what it measures)",
    )
    p.add_argument(
        "--token-file",
        default=None,
        metavar="PATH",
        help="read the operator token from this file (e.g. a mounted Kubernetes Secret)",
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
    from mcpgym.servers.cli.bridge import add_bridge_arguments
    from mcpgym.servers.cli.limit_args import add_limit_arguments

    add_bridge_arguments(p)
    add_limit_arguments(p)
    p.add_argument(
        "--ors-wire",
        action="store_true",
        help="also speak the ORS wire protocol (ORS and openreward clients: /create_session, "
        "/create, /{env}/call, ...); simulation mode only",
    )
    p.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug"],
        help="server and mcpgym log level (default warning; an environment's exceptions are "
        "logged at error, with their traceback)",
    )
    p.add_argument(
        "--debug",
        action="store_true",
        help="also return those tracebacks in the errors the operator's requests get (never a "
        "principal's); a start-up failure prints its traceback",
    )
    p.set_defaults(func=_serve)
