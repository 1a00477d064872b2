"""The README's main job (until Calendar Gym's evaluation replaces it): serve the example
environment with `mcpgym serve` in a subprocess and play one episode with `SyncEnvClient`,
printing every observation.

Run it: `python -m mcpgym.examples.demo` (or `just demo`).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import time

import httpx

from mcpgym import CallToolObservation, SyncEnvClient
from mcpgym.examples.guess import GuessEnv

__all__ = ["main", "play", "serve"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(port: int) -> subprocess.Popen[bytes]:
    """Start `mcpgym serve mcpgym.examples.guess:GuessEnv` and wait until it is healthy."""
    cmd = [
        sys.executable,
        "-m",
        "mcpgym.servers",
        "serve",
        "mcpgym.examples.guess:GuessEnv",
        "--port",
        str(port),
    ]
    proc = subprocess.Popen(cmd)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.terminate()
    raise RuntimeError("server did not become healthy within 20 s")


def play(url: str, seed: int = 7) -> float:
    """Play one episode by binary search; returns the total reward."""
    total = 0.0
    with SyncEnvClient.for_env(GuessEnv, url) as env:
        first = env.reset(seed=seed, low=1, high=100)
        print(f"reset   -> {first.observation.metadata.get('prompt')}")
        tools = env.list_tools()
        print(f"tools   -> {', '.join(t.name for t in tools)}")
        low, high = 1, 100
        while True:
            n = (low + high) // 2
            result = env.step({"type": "call_tool", "tool_name": "guess", "arguments": {"n": n}})
            obs = result.observation
            assert isinstance(obs, CallToolObservation)
            total += result.reward or 0.0
            print(f"guess {n:>3} -> {obs.result}  reward={result.reward}  done={result.done}")
            if result.done:
                break
            verdict = obs.result["verdict"]
            low, high = (n + 1, high) if verdict == "higher" else (low, n - 1)
        state = env.state()
        print(
            f"state   -> episode {state.episode_id}, {state.step_count} steps, "
            f"total reward {total:.2f}"
        )
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    port = _free_port()
    proc = serve(port)
    try:
        play(f"http://127.0.0.1:{port}", seed=args.seed)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
