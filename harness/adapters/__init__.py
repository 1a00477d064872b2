"""mcpgym.harness.adapters: drive real agent harnesses against an environment's tools."""
