"""The `mcpgym` command line: `serve` (in `main`), and one module per other subcommand.

Subcommands register through the `mcpgym.commands` entry-point group, so this package imports
none of them: `build`/`push`/`providers gc` (containers), `init`, `k8s`, `validate`/`list`, and
`eval`/`export` from mcpgym.harness. `main` is the console script.
"""

from mcpgym.servers.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
