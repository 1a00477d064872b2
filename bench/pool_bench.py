"""`just bench-pool`: aggregate steps/s over 1, 2 and 4 pool members at a fixed total of sessions.

Configurations (each a fresh set of `mcpgym serve` processes on 127.0.0.1):

- `one server` — one `ProcessProvider` server, no pool: every session on it;
- `pool process:N` for N in 1, 2, 4 — an `EnvPool` of N servers; the pool's router places the
  sessions (least load: an even spread).

The total number of sessions is fixed (`--sessions`, default 32). Sessions are driven by
`--workers` client processes (default 2, so the client is not one Python process's ceiling),
each running its share of `EnvClient`s in a closed loop of `call_tool` steps for `--seconds`.
Figure: steps completed by all sessions / wall time of the measuring window. Every process this
starts is stopped at the end (the providers stop their servers by process group).

On a machine with C cores the curve flattens once servers + client workers exceed C: the
servers and the clients share the same cores.

Usage: python bench/pool_bench.py [--sessions 32] [--seconds 4] [--workers 2] [--members 1 2 4]
       [--env MODULE:ATTR] [--tool NAME] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Any

from mcpgym.client import EnvClient
from mcpgym.pool import EnvPool
from mcpgym.providers.process import ProcessProvider

GUESS = "mcpgym.examples.guess:GuessEnv"


async def _drive(urls: list[str], tool: str, seconds: float, ready: Any, go: Any) -> int:
    """Closed-loop steps on one session per URL, for `seconds` after `go` is set."""
    count = 0
    clients = [EnvClient(u, timeout=60.0) for u in urls]
    try:
        for env in clients:  # connected and reset before the window opens
            await env.reset(seed=1)
        ready.put(len(clients))
        await asyncio.to_thread(go.wait)
        stop_at = time.monotonic() + seconds

        async def one(env: EnvClient[Any, Any, Any]) -> None:
            nonlocal count
            while time.monotonic() < stop_at:
                await env.call_tool(tool)
                count += 1

        await asyncio.gather(*(one(env) for env in clients))
    finally:
        for env in clients:
            await env.close()
    return count


def _worker(urls: list[str], tool: str, seconds: float, ready: Any, go: Any, out: Any) -> None:
    out.put(asyncio.run(_drive(urls, tool, seconds, ready, go)))


def _measure(urls: list[str], tool: str, seconds: float, workers: int) -> float:
    """Steps/s of `urls` (one session each) driven by `workers` client processes."""
    ctx = mp.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    shares = [share for share in (urls[i::workers] for i in range(workers)) if share]
    procs = [
        ctx.Process(target=_worker, args=(share, tool, seconds, ready, go, out)) for share in shares
    ]
    for p in procs:
        p.start()
    try:
        for _ in procs:  # every worker connected and reset its sessions
            ready.get(timeout=120)
        go.set()
        total = sum(out.get(timeout=seconds + 120) for _ in procs)
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    return total / seconds


async def _one_server(args: argparse.Namespace) -> float:
    async with ProcessProvider(args.env, serve_args=["--max-sessions", "1024"]) as provider:
        handle = await provider.start()
        urls = [handle.base_url] * args.sessions
        return await asyncio.to_thread(_measure, urls, args.tool, args.seconds, args.workers)


async def _pool(args: argparse.Namespace, members: int) -> tuple[float, list[int]]:
    provider = ProcessProvider(args.env, serve_args=["--max-sessions", "1024"])
    async with EnvPool(provider, size=members) as pool:
        placed = [await pool.reserve() for _ in range(args.sessions)]  # the router's placement
        try:
            urls = [m.url for m in placed]
            rate = await asyncio.to_thread(_measure, urls, args.tool, args.seconds, args.workers)
        finally:
            for m in placed:
                pool.release(m)
        return rate, [m.served for m in pool.members]


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--members", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--env", default=GUESS)
    parser.add_argument("--tool", default="hint", help="a tool taking no arguments (hint)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    base = await _one_server(args)
    rows.append(
        {"config": "one server", "members": 1, "steps_per_s": base, "spread": [args.sessions]}
    )
    for n in args.members:
        rate, spread = await _pool(args, n)
        rows.append(
            {"config": f"pool process:{n}", "members": n, "steps_per_s": rate, "spread": spread}
        )
    cores = os.cpu_count()
    print(f"pool bench: {args.sessions} sessions, {args.workers} client processes, "
          f"{args.seconds:g} s each, env {args.env} tool {args.tool}, {cores} cores")  # fmt: skip
    print(f"{'configuration':<18}{'servers':>8}{'steps/s':>10}{'vs one':>8}  sessions per server")
    for r in rows:
        ratio = r["steps_per_s"] / base if base else 0.0
        print(f"{r['config']:<18}{r['members']:>8}{r['steps_per_s']:>10.0f}{ratio:>7.2f}x  "
              f"{r['spread']}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps({"cores": cores, "args": vars(args) | {"json": None},
                                         "rows": rows}, indent=2, default=str))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
