"""`mcpgym eval`: the evaluation runner, its episode store, live progress, summary and report."""
