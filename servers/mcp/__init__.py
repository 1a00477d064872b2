"""Spec MCP: the `mcp` package's server over the environment's tools, on `/mcp`, the WS `mcp` frame
and stdio.
"""
