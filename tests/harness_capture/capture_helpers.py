"""Request bodies and headers in each dialect, as the dialect's clients send them."""

from __future__ import annotations

from typing import Any

from mcpgym.harness.capture import Dialect

PATHS: dict[Dialect, str] = {
    "anthropic": "/v1/messages",
    "openai-chat": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
}


def auth(dialect: Dialect, key: str) -> dict[str, str]:
    """The header each dialect's clients send the key in."""
    if dialect == "anthropic":
        return {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return {"authorization": f"Bearer {key}"}


def body(
    dialect: Dialect,
    *,
    stream: bool,
    prompt: str = "Guess the number.",
    tool: str = "mcp__env__guess",
    **extra: Any,
) -> dict[str, Any]:
    """A first-turn request offering one tool, as the dialect's clients shape it."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    if dialect == "anthropic":
        return {
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "stream": stream,
            "system": [{"type": "text", "text": "You are a test agent."}],
            "messages": [{"role": "user", "content": prompt}],
            "tools": [{"name": tool, "description": "Guess.", "input_schema": schema}],
        } | extra
    if dialect == "openai-chat":
        return {
            "model": "scripted",
            "stream": stream,
            "messages": [
                {"role": "system", "content": "You are a test agent."},
                {"role": "user", "content": prompt},
            ],
            "tools": [{"type": "function", "function": {"name": tool, "parameters": schema}}],
        } | extra
    return {
        "model": "gpt-5-codex",
        "stream": stream,
        "instructions": "You are a test agent.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
        ],
        "tools": [{"type": "function", "name": tool, "parameters": schema}],
    } | extra
