"""The main job: serve Calendar Gym, run every reference agent over the whole suite, report.

    python -m calendar_gym.bench.demo                 # or: just demo
    python -m calendar_gym.bench.demo --limit 1       # one task per tier: a quick smoke run

It starts a real `mcpgym serve calendar_gym:CalendarEnv` on 127.0.0.1 (port chosen by the OS),
plays every task in both phrasings (explicit ids; natural language) with structured and plain
errors through the evaluation runner over WebSocket sessions, at `--concurrency`, with a progress
bar per agent. The agents go from the ceiling to the floor: `oracle`, `naive`, `first-match`,
`random` and `null` with each finish status (`calendar_gym.agents.reference_agents`). Then it
prints the tables (`calendar_gym.bench.demo_report`; each fits 80 columns) — success by tier x
phrasing x error mode, every agent's explicit and natural success, the failure distribution
beside the published 23/51/18/8 split — and writes the report: `report.md` and
`report.html` in `--out` (default `reports/calendar-demo/`), with each agent's own run
(`episodes.jsonl`, `summary.json`, `report.*`) in a subfolder. The server is stopped (by its PID)
however the run ends.

Exit code: 0 when every episode ran and the oracle solved every task; 1 otherwise (the reason is
printed); 2 when the server could not be started or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from calendar_gym.agents import reference_agents
from calendar_gym.bench.demo_report import (
    failure_table,
    headline,
    success_table,
    tool_agents,
    write_report,
)
from calendar_gym.bench.report_section import section
from calendar_gym.suite import ERROR_MODES, PHRASINGS, specs
from calendar_gym.tasks.loader import LATEST, VERSIONS, load_suite
from mcpgym.harness.episodes import Agent, EpisodeSpec
from mcpgym.harness.eval.runner import EvalResult, evaluate

__all__ = ["ServerError", "main", "serve"]

_LISTENING = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")
_OUTPUTS = ("episodes.jsonl", "summary.json", "report.md", "report.html")


class ServerError(RuntimeError):
    """The environment server did not start (the message holds its last output lines)."""


@contextmanager
def serve(target: str = "calendar_gym:CalendarEnv", *, timeout: float = 30.0) -> Iterator[str]:
    """Run `mcpgym serve TARGET` on 127.0.0.1, port 0, in a subprocess; yield its base URL.

    The URL is read from uvicorn's start-up line (no port race); the server's output is drained
    by a thread into a short buffer; on exit the process (ours, by PID) is terminated, then
    killed if it does not stop within 10 s.
    """
    cmd = [
        sys.executable, "-m", "mcpgym.servers", "serve", target, "--host", "127.0.0.1",
        "--port", "0", "--log-level", "info", "--max-sessions", "512",
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: collections.deque[str] = collections.deque(maxlen=40)
    found: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip())
            if not found and (m := _LISTENING.search(line)):
                found.append(m.group(1))
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, name="calendar-demo-server-output", daemon=True)
    reader.start()
    try:
        if not ready.wait(timeout) or not found:
            raise ServerError("the server did not start:\n" + "\n".join(lines))
        url = found[0]
        _wait_healthy(url, proc, timeout)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        reader.join(timeout=5)  # the pipe reaches EOF once the process is gone
        if proc.stdout is not None:
            proc.stdout.close()


def _wait_healthy(url: str, proc: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise ServerError(f"the server exited with code {proc.returncode}")
            try:
                if client.get(f"{url}/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)  # poll interval while the server binds
    raise ServerError(f"{url}/health did not answer within {timeout} s")


# -- running ---------------------------------------------------------------------------------------


def _selected(args: argparse.Namespace) -> list[EpisodeSpec]:
    suite = load_suite(args.suite)
    tasks: list[str] = []
    for tier, members in suite.by_tier().items():
        if args.tiers and tier not in args.tiers:
            continue
        tasks += [t.id for t in members[: args.limit or None]]
    return specs(
        args.suite, tasks=tasks, phrasings=args.phrasings, error_modes=args.error_modes,
        seed=args.seed,
    )  # fmt: skip


def _fresh(folder: Path, resume: bool) -> None:
    """Start an agent's folder over (unless resuming): our own output files only."""
    if resume:
        return
    for name in _OUTPUTS:
        (folder / name).unlink(missing_ok=True)


async def _run_all(
    env: Any, agents: Sequence[Agent], episodes: list[EpisodeSpec], args: argparse.Namespace
) -> dict[str, EvalResult]:
    results: dict[str, EvalResult] = {}
    for agent in agents:
        folder = args.out / agent.name
        _fresh(folder, args.resume)
        results[agent.name] = await evaluate(
            env, agent, episodes, out=folder, concurrency=args.concurrency,
            episode_timeout=args.episode_timeout, progress=not args.quiet, sections=[section],
            title=f"Calendar Gym: {agent.name}",
        )  # fmt: skip
    return results


# -- command line ----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m calendar_gym.bench.demo",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    p.add_argument("--out", type=Path, default=Path("reports/calendar-demo"), help="report folder")
    p.add_argument("--concurrency", type=int, default=8, help="episodes at once (default 8)")
    p.add_argument("--limit", type=int, default=0, metavar="N", help="first N tasks of each tier")
    p.add_argument("--tiers", nargs="+", choices=["T1", "T2", "T3", "T4"], help="only these")
    p.add_argument("--phrasings", nargs="+", choices=PHRASINGS, default=list(PHRASINGS))
    p.add_argument("--error-modes", nargs="+", default=list(ERROR_MODES),
                   choices=["structured", "google", "plain"])  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="reset seed of every episode")
    p.add_argument("--suite", "--suite-version", dest="suite", default=LATEST, choices=VERSIONS,
                   help=f"task suite version (default {LATEST})")  # fmt: skip
    p.add_argument("--agents", nargs="+", metavar="NAME",
                   help="only these agents (default: all; names as in the tables)")  # fmt: skip
    p.add_argument("--episode-timeout", type=float, default=60.0, metavar="SECONDS")
    p.add_argument("--in-process", action="store_true", help="no server: run the env in process")
    p.add_argument("--resume", action="store_true", help="keep episodes already in --out")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; returns the exit code (see the module docstring)."""
    args = _parser().parse_args(argv)
    console = Console()
    if args.concurrency < 1:
        console.print("[red]--concurrency must be at least 1[/red]")
        return 2
    episodes = _selected(args)
    if not episodes:
        console.print("[red]no task matches the selection[/red]")
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    agents: list[Agent] = list(reference_agents())
    if args.agents:
        unknown = set(args.agents) - {a.name for a in agents}
        if unknown:
            console.print(f"[red]unknown agent(s) {sorted(unknown)}[/red]")
            return 2
        agents = [a for a in agents if a.name in args.agents]
    n_tasks = len({e.data["task"] for e in episodes})
    console.print(
        f"Calendar Gym demo, suite v{args.suite}: {n_tasks} tasks x {len(args.phrasings)} "
        f"phrasings x {len(args.error_modes)} error modes\n= {len(episodes)} episodes for each "
        f"of {len(agents)} agents."
    )
    seconds: dict[str, float] = {}
    try:
        with _environment(args) as env:
            where = env if isinstance(env, str) else "in process"
            console.print(f"environment: {where}")
            results: dict[str, EvalResult] = {}
            for agent in agents:
                t0 = time.monotonic()
                results.update(asyncio.run(_run_all(env, [agent], episodes, args)))
                seconds[agent.name] = time.monotonic() - t0
    except ServerError as exc:
        console.print(f"[red]could not start the environment server:[/red] {exc}")
        return 2
    for name in tool_agents(results):
        console.print(success_table(name, results[name].records))
    console.print(failure_table(results))
    console.print(headline(results, seconds))
    report = write_report(args.out, args.suite, results, seconds)
    console.print(f"report: {report}  (and {args.out / 'report.md'})")
    return _verdict(console, results)


@contextmanager
def _environment(args: argparse.Namespace) -> Iterator[Any]:
    if args.in_process:
        from calendar_gym.env import CalendarEnv

        yield CalendarEnv
    else:
        with serve() as url:
            yield url


def _verdict(console: Console, results: dict[str, EvalResult]) -> int:
    problems = [
        f"{name}: {r.summary['errors']} episode(s) ended in errors"
        for name, r in results.items()
        if r.summary["errors"]
    ]
    oracle = results.get("oracle")
    if oracle is not None and oracle.summary["success_rate"] < 1.0:
        failed = [r.spec_id for r in oracle.records if not r.success][:5]
        problems.append(f"oracle failed {len(failed)}+ episode(s), e.g. {failed}")
    for p in problems:
        console.print(f"[red]FAIL[/red] {p}")
    if not problems:
        console.print("[green]OK[/green]: every episode ran and the oracle solved every task.")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
