"""`python -m mcpgym.servers.cli`: the `mcpgym` command."""

from mcpgym.servers.cli.main import main

raise SystemExit(main())
