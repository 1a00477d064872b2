"""In-process cost of mcpgym's own per-step path, without sockets: µs per WS tool-call step.

Times `Dispatcher.handle_text(session, STEP_FRAME)` + the WS reply encoding (everything mcpgym does
for a frame between uvicorn/Starlette handing it over and handing the reply back), then each
component on its own, then a cProfile of the whole path (slower under the profiler; read it for
proportions). The floor's equivalent is `json.loads` + `json.dumps` (the first line).

Usage: python bench/calls/_micro.py [--n 20000] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/

from figures._measure_load import STEP_FRAME

from calls._floor import _reply


async def _per_call_us(fn: Callable[[], Awaitable[Any] | Any], n: int, reps: int = 5) -> float:
    """Least CPU time per call over `reps` batches of `n` (other load only ever adds time)."""
    best = float("inf")
    for _ in range(reps + 1):  # the first batch warms up
        t0 = time.process_time()
        for _ in range(n):
            r = fn()
            if asyncio.iscoroutine(r):
                await r
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best


async def main(n: int, profile: bool) -> None:
    from mcpgym.examples.guess import GuessEnv
    from mcpgym.servers.app import create_app
    from mcpgym.servers.dispatch import observation_payload
    from mcpgym.servers.sim.ws import _encode
    from mcpgym.types import CallToolObservation

    app = create_app(GuessEnv)
    sessions = app.state.sessions
    dispatcher = app.state.dispatcher
    session = await sessions.open(transport="ws")
    env = session.env
    await dispatcher.reset(session, {"seed": 7})

    msg = json.loads(STEP_FRAME)
    action_data = msg["data"]
    action = env.parse_action(action_data)
    spec = env.get_tool("guess")
    kwargs = spec.validate(action.arguments)
    value = env.guess(**kwargs)
    obs = await env.astep(action)
    reply = {"type": "observation", "data": observation_payload(obs)}

    async def whole() -> None:
        r, _ = await dispatcher.handle_text(session, STEP_FRAME)
        _encode(r)  # type: ignore[arg-type]

    def floor_app() -> str:
        return json.dumps(
            {"type": "observation", "data": _reply(json.loads(STEP_FRAME))}, separators=(",", ":")
        )

    rows: list[tuple[str, Callable[[], Any]]] = [
        ("floor app: json.loads + _reply + json.dumps", floor_app),
        ("mcpgym: handle_text + _encode (whole path)", whole),
        ("  dispatcher.step (parse + astep + payload)",
         lambda: dispatcher.step(session, action_data, None)),
        ("  json.loads(frame)", lambda: json.loads(STEP_FRAME)),
        ("  env.parse_action (pydantic union)", lambda: env.parse_action(action_data)),
        ("  env.astep(action) (whole step incl. below)", lambda: env.astep(action)),
        ("    env.call_tool (validate + _exclusive + dump)",
         lambda: env.call_tool("guess", {"n": 50})),
        ("      spec.validate (pydantic args model)", lambda: spec.validate({"n": 50})),
        ("      env._exclusive(guess) (lock + inline call)",
         lambda: env._exclusive(env.guess, (), kwargs, None)),
        ("      guess() itself", lambda: env.guess(**kwargs)),
        ("      spec.dump_result (adapter serializer)", lambda: spec.dump_result(value)),
        ("    CallToolObservation(...)", lambda: CallToolObservation(tool_name="guess", result={})),
        ("  observation_payload (model_dump)", lambda: observation_payload(obs)),
        ("  _encode(reply) (json.dumps default=str)", lambda: _encode(reply)),
        ("mcpgym: whole path again (order check)", whole),
    ]  # fmt: skip
    loop = type(asyncio.get_running_loop()).__module__
    print(f"least CPU µs per call, 5 x {n} calls (in-process, {loop} loop)")
    for label, fn in rows:
        print(f"  {await _per_call_us(fn, n):8.2f}  {label}")
    if profile:
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(n):
            await whole()
        pr.disable()
        stats = pstats.Stats(pr)
        stats.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=5000)
    p.add_argument("--profile", action="store_true")
    a = p.parse_args()
    import uvloop

    uvloop.run(main(a.n, a.profile))
