"""Example environments shipped with mcpgym (used by the README, docs and tests)."""
