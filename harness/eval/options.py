"""The options of `mcpgym eval` that come in groups: model requests and the harness.

Kept apart from the code that uses them so that building the parser (every `mcpgym` command,
`mcpgym --help` included) imports nothing but argparse.
"""

from __future__ import annotations

import argparse

__all__ = ["add_harness_arguments", "add_model_arguments"]


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """The llm agent's model-request options of `mcpgym eval`."""
    g = p.add_argument_group("llm agent: model requests")
    g.add_argument(
        "--model-timeout",
        type=float,
        metavar="SECONDS",
        help="limit per model request (default 300; a CPU model's first long prompt is slow)",
    )
    g.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0.0)")
    g.add_argument("--max-tokens", type=int, help="most tokens per model answer (server default)")
    g.add_argument("--top-p", type=float, help="nucleus sampling (server default)")
    g.add_argument(
        "--model-option",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="another request field, e.g. seed=7 or stop='[\"END\"]' (repeatable)",
    )
    g.add_argument(
        "--compact-tools",
        action="store_true",
        help="present compact tool schemas (first-sentence descriptions, no titles/examples)",
    )
    g.add_argument(
        "--tools",
        metavar="NAME[,NAME...]",
        help="present only these tools to the model (a task's data['tools'] narrows it further)",
    )


def add_harness_arguments(parser: argparse.ArgumentParser) -> None:
    """The `--harness*` options of `mcpgym eval` (`--model-url`, `--model`, `--api-key` and
    `--turn-timeout` are shared with the other agents)."""
    group = parser.add_argument_group("harness (a real agent CLI plays the episodes)")
    group.add_argument(
        "--harness",
        choices=["claude-code", "codex", "opencode", "cli"],
        help="run this harness against the --env's production tools; the agent plays the user",
    )
    group.add_argument("--harness-bin", metavar="PATH", help="the harness program (default: PATH)")
    group.add_argument(
        "--harness-command",
        nargs="+",
        metavar="ARG",
        help="--harness cli: the program and its arguments (NDJSON turns; see docs/harness.md)",
    )
    group.add_argument(
        "--harness-model",
        metavar="ID",
        help="model id the harness asks for (the proxy sends --model upstream)",
    )
    group.add_argument(
        "--harness-tools",
        choices=["production", "simulation"],
        default="production",
        help="which tools the harness sees (simulation: also simulation-only ones, e.g. a "
        "task suite's finish; default production)",
    )
    group.add_argument(
        "--harness-transport",
        choices=["http", "stdio"],
        default="http",
        help="how the harness reaches the tools (default http)",
    )
