"""`mcpgym eval`: evaluate an agent on an environment, from the command line.

Registered through the `mcpgym.commands` entry point (`eval = "mcpgym.harness.cli:register"`),
so `mcpgym.servers` never imports the harness.

Examples::

    mcpgym eval --env mcpgym.examples.guess:GuessEnv --agent random --episodes 50 --out runs/r1
    mcpgym eval --url http://127.0.0.1:8000 --agent llm --model-url http://127.0.0.1:11434/v1 \\
        --model qwen3 --tasks mypkg.tasks:suite --concurrency 4 --out runs/qwen3
    mcpgym eval --env calendar_gym:CalendarEnv --pool process:4 --agent oracle \
        --tasks calendar_gym.suite:specs --concurrency 16
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any, cast

from mcpgym.providers.base import ProviderError

__all__ = ["register", "run"]

_EPILOG = """\
Episodes come from --tasks (a callable returning EpisodeSpecs) or from --episodes N with seeds
S, S+1, ...  Results go to --out: episodes.jsonl (one line per episode, flushed as each ends),
summary.json, report.md and report.html. Rerunning with the same --out resumes: only episodes
missing from episodes.jsonl are played.

--pool KIND:N starts N servers (process or ray: of --env; docker, podman, swarm or kubernetes:
of --image) and spreads the episodes over them by least load. An episode whose server dies is
an infrastructure error: it is played again on another server (--infra-retries) and reported
apart from the agent's failures; the dead server is replaced.

Agents: 'random' (random tools, schema-conforming arguments), 'llm' (needs --model-url and
--model; API key from --api-key or $OPENAI_API_KEY), names that installed packages add through
the 'mcpgym.agents' entry points, or MODULE:ATTR.
"""


def register(sub: Any) -> None:
    """Add the `eval` subcommand to the `mcpgym` parser's subparsers."""
    p = sub.add_parser(
        "eval",
        help="evaluate an agent on an environment (in process or at a URL)",
        description="Run an agent over many episodes of an environment, at bounded concurrency, "
        "with resumable results and a report.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--env", metavar="MODULE:ATTR", help="environment class or factory, run in this process"
    )
    where.add_argument("--url", help="server base URL, e.g. http://127.0.0.1:8000 (uses /ws)")
    where.add_argument("--image", help="environment image for a container --pool")
    p.add_argument(
        "--pool",
        metavar="KIND:N",
        help="serve the environment on N servers of a provider (process:4, ray:4, docker:8, "
        "swarm:3, kubernetes:2) and spread the episodes over them",
    )
    p.add_argument(
        "--infra-retries",
        type=int,
        default=3,
        metavar="K",
        help="replays of an episode lost to a dead pool server (default 3)",
    )
    p.add_argument(
        "--agent", default="random", metavar="NAME|MODULE:ATTR", help="agent (default: random)"
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--tasks", metavar="MODULE:ATTR", help="callable (or list) returning EpisodeSpecs"
    )
    what.add_argument(
        "--episodes", type=int, metavar="N", help="N seeded episodes (default 10 without --tasks)"
    )
    p.add_argument("--seed", type=int, default=0, help="first seed for --episodes (default 0)")
    p.add_argument(
        "--max-steps", type=int, default=50, help="step limit for --episodes (default 50)"
    )
    p.add_argument(
        "--repeat", type=int, default=1, metavar="K", help="attempts per task, for pass@k"
    )
    p.add_argument("--concurrency", type=int, default=8, metavar="M", help="episodes at once (8)")
    p.add_argument("--turn-timeout", type=float, metavar="SECONDS", help="limit per agent turn")
    p.add_argument("--episode-timeout", type=float, metavar="SECONDS", help="limit per episode")
    p.add_argument(
        "--success-threshold",
        type=float,
        default=1.0,
        help="final reward counted as success when the env gives no verdict (1.0)",
    )
    p.add_argument("--out", type=Path, help="output folder (resumed if it exists)")
    p.add_argument(
        "--section",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="extra report section hook (repeatable)",
    )
    p.add_argument("--model-url", help="OpenAI-compatible base URL for the llm agent")
    p.add_argument("--model", help="model name for the llm agent")
    p.add_argument("--api-key", help="API key for the llm agent (default $OPENAI_API_KEY)")
    _add_model_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress display or summary table")
    from mcpgym.harness.adapters.eval import add_arguments as add_harness_arguments

    add_harness_arguments(p)
    p.set_defaults(func=run)


def _add_model_arguments(p: argparse.ArgumentParser) -> None:
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


def _model_options(args: argparse.Namespace) -> dict[str, Any]:
    import json

    sampling: dict[str, Any] = {}
    if args.top_p is not None:
        sampling["top_p"] = args.top_p
    for item in args.model_option:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--model-option {item!r}: expected KEY=JSON")
        try:
            sampling[key] = json.loads(raw)
        except ValueError:
            sampling[key] = raw  # a bare word is a string
    if args.model_timeout is not None and not args.model_timeout > 0:
        raise ValueError("--model-timeout must be a positive number of seconds")
    tools = tuple(t.strip() for t in args.tools.split(",") if t.strip()) if args.tools else None
    return {
        "model_timeout": args.model_timeout,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
        "sampling": sampling,
        "compact_tools": args.compact_tools,
        "tools": tools,
    }


def run(args: argparse.Namespace) -> int:
    """Run `mcpgym eval` with parsed arguments; returns the exit code."""
    from mcpgym.harness.agents import AgentOptions, load_agent
    from mcpgym.harness.episodes import repeat, seeded_specs
    from mcpgym.harness.runner import evaluate
    from mcpgym.harness.sessions import InProcess
    from mcpgym.servers.factory import load_target, make_factory

    try:
        pool = _pool(args)
        if pool is not None:
            env: Any = None
        elif args.image:
            raise ValueError("--image needs --pool KIND:N (docker, podman, swarm, kubernetes)")
        else:
            env = args.url or InProcess(make_factory(load_target(args.env))[0], name=args.env)
        options = AgentOptions(
            model_url=args.model_url,
            model=args.model,
            api_key=args.api_key or os.environ.get("OPENAI_API_KEY"),
            seed=args.seed,
            **_model_options(args),
        )
        agent = load_agent(args.agent, options)
        if args.tasks:
            found = load_target(args.tasks)
            specs: list[Any] = list(cast(Any, found)() if callable(found) else found)
        else:
            specs = seeded_specs(args.episodes or 10, args.seed, max_steps=args.max_steps)
        if args.repeat > 1:
            specs = repeat(specs, args.repeat)
        sections = [load_target(s) for s in args.section]
    except ValueError as exc:
        print(f"mcpgym eval: error: {exc}", file=sys.stderr)
        return 2
    if args.harness and (not args.env or pool is not None):
        print("mcpgym eval: error: --harness needs --env (run in this process)", file=sys.stderr)
        return 2

    async def play() -> Any:
        settings: dict[str, Any] = {
            "out": args.out,
            "concurrency": args.concurrency,
            "turn_timeout": args.turn_timeout,
            "episode_timeout": args.episode_timeout,
            "success_threshold": args.success_threshold,
            "progress": not args.quiet,
            "sections": sections,
            "infra_retries": args.infra_retries,
        }
        if pool is not None:
            from mcpgym.pool import EnvPool

            async with EnvPool(pool[0], size=pool[1]) as running:
                return await evaluate(running, agent, specs, **settings)
        if not args.harness:
            return await evaluate(env, agent, specs, **settings)
        from mcpgym.harness.adapters.eval import HarnessEvalConfig, harness_eval

        async with harness_eval(HarnessEvalConfig.from_args(args)) as (target, user):
            return await evaluate(target, user, specs, **settings)

    try:
        result = asyncio.run(play())
    except ValueError as exc:
        print(f"mcpgym eval: error: {exc}", file=sys.stderr)
        return 2
    except ProviderError as exc:  # the pool could not start: infrastructure, not the agent
        print(f"mcpgym eval: error: the pool did not start: {exc}", file=sys.stderr)
        return 3
    if not args.quiet:
        _print_summary(result.summary, args.out)
    return 0


def _pool(args: argparse.Namespace) -> tuple[Any, int] | None:
    """The provider and size of `--pool KIND:N`, or `None` without it."""
    if not args.pool:
        return None
    from mcpgym.pool import make_provider, parse_pool_spec

    kind, size = parse_pool_spec(args.pool)
    if args.url:
        raise ValueError("--pool starts its own servers: give --env or --image, not --url")
    return make_provider(kind, target=args.env, image=args.image), size


def _print_summary(summary: dict[str, Any], out: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="mcpgym eval", show_header=False)
    reward = summary["reward"]
    table.add_row("episodes", str(summary["episodes"]))
    table.add_row("success rate", f"{summary['success_rate']:.1%}")
    table.add_row("reward", f"{reward['mean']:.3f} ± {reward['stderr']:.3f}")
    table.add_row("episode errors", str(summary["errors"]))
    infra = summary.get("infrastructure") or {}
    if infra.get("errors") or "pool" in infra:
        table.add_row(
            "infrastructure errors",
            f"{infra['errors']} (retried {infra['retried']}, unrecovered {infra['unrecovered']})",
        )
    table.add_row("tool errors", ", ".join(f"{k} {v}" for k, v in summary["tool_errors"].items()))
    for k, v in summary["pass_at_k"]["pass@k"].items():
        if k != "1":
            table.add_row(f"pass@{k}", f"{v:.1%}")
    if out is not None:
        table.add_row("report", str(out / "report.html"))
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    """`python -m mcpgym.harness.cli eval ...`: the same command without the `mcpgym` script."""
    parser = argparse.ArgumentParser(prog="python -m mcpgym.harness.cli")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
