from mcpgym.servers.cli import main

raise SystemExit(main())
