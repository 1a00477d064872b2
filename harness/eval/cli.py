"""`mcpgym eval`: evaluate an agent on an environment, from the command line.

Registered through the `mcpgym.commands` entry point (`eval = "mcpgym.harness.eval.cli:register"`),
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
import contextlib
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any, cast

from mcpgym.harness.eval.options import add_harness_arguments, add_model_arguments

__all__ = ["register", "run"]

_EPILOG = """\
Episodes come from --tasks (a callable returning EpisodeSpecs; --episodes N keeps its first N)
or from --episodes N with seeds S, S+1, ...  Results go to --out: episodes.jsonl (one line per
episode, flushed as each ends), summary.json, report.md and report.html. Rerunning with the
same --out resumes: only episodes missing from episodes.jsonl are played.

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
    p.add_argument(
        "--tasks", metavar="MODULE:ATTR", help="callable (or list) returning EpisodeSpecs"
    )
    p.add_argument(
        "--episodes",
        type=int,
        metavar="N",
        help="with --tasks: its first N episodes; without: N seeded episodes (default 10)",
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
    add_model_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress display or summary table")
    add_harness_arguments(p)
    p.set_defaults(func=run)


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
    from mcpgym.harness.eval.runner import evaluate
    from mcpgym.harness.sessions import InProcess
    from mcpgym.providers.base import ProviderError
    from mcpgym.servers.factory import StartupFailure, load_target

    try:
        pool = _pool(args)
        if pool is not None:
            env: Any = None
        elif args.image:
            raise ValueError("--image needs --pool KIND:N (docker, podman, swarm, kubernetes)")
        else:
            env = args.url or InProcess(_probed(args.env), name=args.env)
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
            if args.episodes is not None:
                specs = specs[: args.episodes]
        else:
            specs = seeded_specs(args.episodes or 10, args.seed, max_steps=args.max_steps)
        if args.repeat > 1:
            specs = repeat(specs, args.repeat)
        sections = [load_target(s) for s in args.section]
    except ValueError as exc:
        print(f"mcpgym eval: error: {exc}", file=sys.stderr)
        return 2
    except StartupFailure as exc:  # as `mcpgym serve` says it: one line, exit 3
        print(f"mcpgym eval: error: {exc}", file=sys.stderr)
        return 3
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
            from mcpgym.harness.eval.pool_target import PoolTarget
            from mcpgym.pool import EnvPool
            from mcpgym.servers.cli.progress import Stages

            stages = None if args.quiet else Stages("mcpgym eval: starting", total=pool[1])
            with stages or contextlib.nullcontext():
                running = await EnvPool(pool[0], size=pool[1], progress=stages).start()
            try:
                named = PoolTarget(running, name=args.env or args.image)
                return await evaluate(named, agent, specs, **settings)
            finally:
                await running.aclose()
        if not args.harness:
            return await evaluate(env, agent, specs, **settings)
        from mcpgym.harness.eval.harness import HarnessEvalConfig, harness_eval

        async with harness_eval(HarnessEvalConfig.from_args(args)) as (target, user):
            return await evaluate(target, user, specs, **settings)

    import asyncio  # here, not at the top: `mcpgym --help` need not pay for the event loop

    env_log = EnvironmentLog(args.out)
    try:
        result = asyncio.run(play())
    except KeyboardInterrupt:
        kept = f"; the episodes that ended are in {args.out}/episodes.jsonl: rerun the same "
        print(
            "\nmcpgym eval: interrupted (Ctrl-C)"
            + (kept + "command to resume" if args.out else "; pass --out DIR to keep results"),
            file=sys.stderr,
        )
        return 130
    except ValueError as exc:
        print(f"mcpgym eval: error: {exc}", file=sys.stderr)
        return 2
    except ProviderError as exc:  # the pool could not start: infrastructure, not the agent
        print(f"mcpgym eval: error: the pool did not start: {exc}", file=sys.stderr)
        return 3
    finally:
        env_log.close()
    if not args.quiet:
        _print_summary(result.summary, args.out)
    return _verdict(result.summary)


class EnvironmentLog(logging.Filter):
    """With `--out`, the environment's exceptions (mcpgym.runtime.crashes: one traceback each) go to
    `OUT/environment.log` instead of between the progress lines; `close()` says how many."""

    def __init__(self, out: Path | None) -> None:
        super().__init__()
        self.count = 0
        self.path = out / "environment.log" if out is not None else None
        self._logger = logging.getLogger("mcpgym.env")
        self._handler: logging.Handler | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handler = logging.FileHandler(self.path, encoding="utf-8")
            self._handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
            self._handler.addFilter(self)
            self._logger.addHandler(self._handler)
            self._logger.propagate = False

    def filter(self, record: logging.LogRecord) -> bool:
        self.count += 1
        return True

    def close(self) -> None:
        """Detach from the logger; name the file when the run logged anything there."""
        if self._handler is None:
            return
        self._logger.removeHandler(self._handler)
        self._logger.propagate = True
        self._handler.close()
        self._handler = None
        if self.count:
            print(
                f"mcpgym eval: {self.count} environment exception(s) logged with their "
                f"tracebacks in {self.path}",
                file=sys.stderr,
            )


def _verdict(summary: dict[str, Any]) -> int:
    """Print the first error of each kind; exit 1 when every episode ended in an error."""
    failed, total = summary["errors"], summary["episodes"]
    kinds: dict[str, tuple[str, int]] = {}
    for message, count in summary["error_messages"].items():
        kind = error_kind(message)
        seen = kinds.get(kind)
        kinds[kind] = (seen[0], seen[1] + count) if seen else (message, count)
    for message, count in kinds.values():
        print(f"mcpgym eval: {count} episode(s) ended in: {message}", file=sys.stderr)
    if total and failed == total:
        print(
            f"mcpgym eval: error: every episode failed ({failed} of {total}); fix the first "
            "error above (episodes.jsonl has each one)",
            file=sys.stderr,
        )
        return 1
    return 0


_VARIABLE = re.compile(r"'[^']*'|\"[^\"]*\"|\b[0-9a-f]{6,}\b|\d+(?:\.\d+)?")


def error_kind(message: str) -> str:
    """An episode error's kind: its text with the parts that vary masked (quoted values, ids,
    numbers), so `RuntimeError: database 0 not found` and `... database 3 not found` are one
    kind and a `KeyError` beside them another.

    Example:
        >>> error_kind("ExecutionError: Env.reset raised KeyError: 'user 4'")
        'ExecutionError: Env.reset raised KeyError: …'
    """
    return _VARIABLE.sub("…", message)


def _probed(target: str) -> Any:
    """The factory of `--env`, after building (and closing) one instance as `serve` does."""
    from mcpgym.servers.factory import load_target, make_factory, probe_target

    found = load_target(target)
    probe_target(found)
    return make_factory(found)[0]


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
    by_type = ", ".join(f"{k} {v}" for k, v in summary["tool_errors"].items())
    failed = str(summary["tool_error_calls"])
    table.add_row("tool errors", failed + (f" ({by_type})" if by_type else ""))
    for k, v in summary["pass_at_k"]["pass@k"].items():
        if k != "1":
            table.add_row(f"pass@{k}", f"{v:.1%}")
    if out is not None:
        table.add_row("report", str(out / "report.html"))
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    """`python -m mcpgym.harness.eval.cli eval ...`: the command without the `mcpgym` script."""
    parser = argparse.ArgumentParser(prog="python -m mcpgym.harness.eval.cli")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
