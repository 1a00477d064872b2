"""mcpgym.harness: drive real agents against environments (adapters, capture, evaluation)."""
