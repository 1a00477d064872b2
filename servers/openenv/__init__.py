"""OpenEnv 0.10.0's HTTP MCP dialect and task routes, served beside spec MCP."""
