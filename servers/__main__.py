from mcpgym.servers.cli.main import main

raise SystemExit(main())
