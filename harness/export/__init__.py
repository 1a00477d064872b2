"""`mcpgym export`: write an mcpgym server out as another framework's package (verifiers)."""
