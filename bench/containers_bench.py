"""`just bench-containers`: environment servers in containers beside `mcpgym serve` in a process.

Figures: start-to-healthy p50/p95 for 1 container (repeated) and for 16 started at once, stop time
per container, RSS per container (the container's processes, read from /proc by host PID), image
size; and for comparison `mcpgym serve` as a subprocess: spawn-to-healthy and RSS. Every
container is removed at the end (the provider's context) and every process stopped by PID.

Usage: python bench/containers_bench.py [--engine unix:///...] [--image TAG] [--repeat N]
       [--fleet N] [--json PATH]
(`just bench-containers` starts the Docker engine and builds the image on the local base first.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from mcpgym.providers.docker import DockerProvider
from mcpgym.providers.podman import PodmanProvider


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def _process_figures(repeat: int) -> dict[str, float]:
    """`mcpgym serve` as a subprocess: spawn → first 200 from /health, and RSS once healthy."""
    starts: list[float] = []
    rss: list[float] = []
    for _ in range(repeat):
        port = _free_port()
        t = time.perf_counter()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mcpgym.servers",
                "serve",
                "mcpgym.examples.guess:GuessEnv",
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_http(f"http://127.0.0.1:{port}/health", proc, 60)
            starts.append(time.perf_counter() - t)
            rss.append(_rss_mb([proc.pid]))
        finally:
            proc.terminate()
            proc.wait(10)
    return {"start_p50_s": _pct(starts, 0.5), "rss_mb": statistics.median(rss)}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_http(url: str, proc: subprocess.Popen[bytes], limit_s: float) -> None:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.01)
    raise RuntimeError(f"{url} not healthy in {limit_s}s")


async def _container_figures(
    image: str, engine: str | None, podman: bool, repeat: int, fleet: int
) -> dict[str, float]:
    cls = PodmanProvider if podman else DockerProvider
    async with cls(image, engine=engine, health_deadline_s=300) as provider:
        single: list[float] = []
        stops: list[float] = []
        for _ in range(repeat):
            t = time.perf_counter()
            handle = await provider.start()
            single.append(time.perf_counter() - t)
            t = time.perf_counter()
            await provider.stop(handle)
            stops.append(time.perf_counter() - t)

        async def timed_start() -> tuple[float, Any]:
            t = time.perf_counter()
            h = await provider.start()
            return time.perf_counter() - t, h

        started = await asyncio.gather(*(timed_start() for _ in range(fleet)))
        many = [s for s, _ in started]
        client = provider.client
        rss: list[float] = []
        for _, handle in started:
            top = client.api.top(handle.id)
            col = top["Titles"].index("PID")
            rss.append(_rss_mb([int(row[col]) for row in top["Processes"]]))
        for _, handle in started:
            t = time.perf_counter()
            await provider.stop(handle)
            stops.append(time.perf_counter() - t)
        size = client.images.get(image).attrs["Size"] / 1e6
    return {
        "start1_p50_s": _pct(single, 0.5),
        "start1_p95_s": _pct(single, 0.95),
        f"start{fleet}_p50_s": _pct(many, 0.5),
        f"start{fleet}_p95_s": _pct(many, 0.95),
        "stop_p50_s": _pct(stops, 0.5),
        "stop_max_s": max(stops),
        "rss_mb": statistics.median(rss),
        "image_mb": size,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default=os.environ.get("DOCKER_HOST"))
    parser.add_argument("--podman", action="store_true", help="the engine is Podman's socket")
    parser.add_argument("--image", default="mcpgym-bench-guess:latest")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fleet", type=int, default=16)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    proc = _process_figures(args.repeat)
    cont = asyncio.run(
        _container_figures(args.image, args.engine, args.podman, args.repeat, args.fleet)
    )
    n = args.fleet
    rows = [
        (
            "start-to-healthy, 1 (p50 / p95)",
            f"{cont['start1_p50_s']:.2f} / {cont['start1_p95_s']:.2f} s",
            f"{proc['start_p50_s']:.2f} s (p50)",
        ),
        (
            f"start-to-healthy, {n} at once (p50 / p95)",
            f"{cont[f'start{n}_p50_s']:.2f} / {cont[f'start{n}_p95_s']:.2f} s",
            "-",
        ),
        ("stop (p50 / max)", f"{cont['stop_p50_s']:.2f} / {cont['stop_max_s']:.2f} s", "-"),
        ("RSS per server", f"{cont['rss_mb']:.0f} MB", f"{proc['rss_mb']:.0f} MB"),
        ("image size", f"{cont['image_mb']:.0f} MB", "-"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  {'container':>22}  {'mcpgym serve (process)':>24}")
    for name, c, p in rows:
        print(f"{name:<{width}}  {c:>22}  {p:>24}")
    if args.json:
        args.json.write_text(json.dumps({"container": cont, "process": proc}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
