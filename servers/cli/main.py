"""The `mcpgym` command line: `serve` here; other packages add subcommands through the
`mcpgym.commands` entry-point group (a callable taking the argparse subparsers object)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

from mcpgym.servers.cli import serve
from mcpgym.targets import describe_exception

__all__ = ["build_parser", "main"]

log = logging.getLogger("mcpgym")


_BUILTIN_COMMANDS = frozenset({"serve"})


def build_parser(plugins: bool = True) -> argparse.ArgumentParser:
    """The full parser, including subcommands contributed by installed packages (`plugins`)."""
    parser = argparse.ArgumentParser(
        prog="mcpgym",
        description="Author, serve and evaluate tool-using environments for agents.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="print the traceback of an error instead of one line (also accepted after COMMAND)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    serve.register(sub)
    for ep in entry_points(group="mcpgym.commands") if plugins else ():
        try:
            ep.load()(sub)
        except Exception as exc:  # a broken plugin must not take the CLI down
            log.warning("could not load mcpgym command %r: %s", ep.name, exc)
    return parser


EXIT_CODES = """\
Exit codes (every command): 0 ok, 1 the command ran and found a failure (a check, an episode,
an unexpected error: one line, --debug for the traceback), 2 usage or a bad target (cannot
import it, not an environment), 3 the environment failed while starting (__init__, reset,
a server that did not come up), 4 see the command's help (serve: the address is taken;
validate: a fail-severity check was skipped), 130 interrupted (Ctrl-C), 141 the reader of the
output went away (| head).
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `mcpgym` console script (exit codes: `EXIT_CODES`)."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), "")
    debug = "--debug" in argv  # global (before COMMAND) or after it: the same switch
    argv = [a for a in argv if a != "--debug"] + (
        ["--debug"] if debug and command == "serve" else []
    )
    # A built-in command needs no plugin: loading them imports their packages (the harness's
    # `eval` pulls in the `mcp` package: +1.2 s and +33 MB on every `mcpgym serve`).
    builtin = command in _BUILTIN_COMMANDS
    try:
        args = build_parser(plugins=not builtin).parse_args(argv)
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except KeyboardInterrupt:
        print(f"\nmcpgym {command}: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `mcpgym list | head`: the reader left; say nothing more
        _drop_stdout()
        return 141
    except Exception as exc:
        if debug:
            raise
        print(
            f"mcpgym {command or ''}: error: {describe_exception(exc)}; rerun with --debug for "
            "the traceback",
            file=sys.stderr,
        )
        return 1


def _drop_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    raise SystemExit(main())
