"""Run by the *verifiers* virtual environment's Python (verifiers 0.4.0 + openenv-core 0.3.0),
not mcpgym's: plays tasks of verifiers' own `openenv` taskset with its own `OpenEnvEnv.run`,
the player being a scripted policy instead of a model.

Reads `{"url", "resets", "openings", "base_url_attribute"}` as JSON on stdin and prints one
JSON object:
`{"tasks": [{"name", "actions", "payloads", "rewards", "stop"} | {"name", "error"}]}`.

Everything between the player and the server is verifiers' and openenv's code: the taskset
builds the tasks from `resets`, `OpenEnvEnv.run` opens openenv's `GenericEnvClient`, reads
`/schema`, lists the tools with a `list_tools` step, resets, turns each reply into an action with
its own `parse_action`, steps, and records the summed reward on the trace (a real verifiers
`Trace`). The scripted player only answers `interaction.turn(payload)` as a model would: with
a JSON action chosen from the payload (bisection for Guess the Number), after the task's
`openings` (fixed replies sent first, such as calls the server must refuse).

`base_url_attribute`: verifiers 0.4.0 reads `client._base_url`, which openenv 0.10.0's client
has and openenv-core 0.3.0's does not (it keeps `_ws_url`). When true, that one attribute is
given to the client class (derived from `_ws_url`) before the run; when false the run is the
released code unchanged.
"""

import asyncio
import contextlib
import json
import sys
from typing import Any


class ScriptedSegment:
    """What `Interaction.turn` returns: the reply, and whether the exchange ended."""

    def __init__(self, reply: str) -> None:
        self.last_reply = reply
        self.terminated = False


class Bisection:
    """Guess the Number by bisection over the bounds the prompt states."""

    def __init__(self, openings: list[str]) -> None:
        self.low, self.high, self.last = 1, 100, 0
        self.openings = list(openings)

    def act(self, payload: dict[str, Any]) -> str:
        if self.openings:
            return self.openings.pop(0)
        observation = payload["observation"]
        prompt = observation.get("metadata", {}).get("prompt", "")
        if prompt.startswith("Guess the integer between "):  # the bounds this episode states
            low, _, high = prompt.removeprefix("Guess the integer between ").rstrip(".").split()
            self.low, self.high = int(low), int(high)
        result = observation.get("result")
        if isinstance(result, dict) and "verdict" in result:
            if result["verdict"] == "higher":
                self.low = self.last + 1
            else:
                self.high = self.last - 1
        self.last = (self.low + self.high) // 2
        call = {"type": "call_tool", "tool_name": "guess", "arguments": {"n": self.last}}
        return json.dumps(call)


class ScriptedInteraction:
    def __init__(self, trace: Any, openings: list[str]) -> None:
        self.trace = trace
        self.policy = Bisection(openings)
        self.payloads: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []

    async def turn(self, message: str) -> ScriptedSegment:
        payload = json.loads(message)
        self.payloads.append(payload)
        reply = self.policy.act(payload)
        self.actions.append({"reply": reply})
        return ScriptedSegment(reply)


class ScriptedPlayer:
    """`agents.player`: opens a scripted interaction on a real verifiers `Trace`."""

    def __init__(self, openings: list[str]) -> None:
        self.openings = openings
        self.last: ScriptedInteraction | None = None

    @contextlib.asynccontextmanager
    async def interaction(self, task: Any):
        from verifiers.v1.configs.agent import AgentConfig
        from verifiers.v1.trace import AgentInfo, Trace, TraceTask

        trace = Trace(
            task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
            agent=AgentInfo(config=AgentConfig(), name="player"),
        )
        self.last = ScriptedInteraction(trace, self.openings)
        yield self.last


class ScriptedAgents:
    def __init__(self, openings: list[str]) -> None:
        self.player = ScriptedPlayer(openings)


async def play(request: dict[str, Any]) -> dict[str, Any]:
    from verifiers.v1.tasksets.openenv import OpenEnvConfig, OpenEnvEnv, OpenEnvTaskset

    if request.get("base_url_attribute"):
        from openenv import GenericEnvClient

        def base_url(client: Any) -> str:
            return client._ws_url.removesuffix("/ws")

        GenericEnvClient._base_url = property(base_url)  # type: ignore[attr-defined]

    taskset = OpenEnvTaskset(OpenEnvConfig(base_url=request["url"], resets=request["resets"]))
    env = OpenEnvEnv.__new__(OpenEnvEnv)  # run() reads nothing from the env's config
    rows: list[dict[str, Any]] = []
    openings: list[list[str]] = request.get("openings") or [[] for _ in request["resets"]]
    for task, opening in zip(taskset, openings, strict=True):
        agents = ScriptedAgents(opening)
        try:
            await asyncio.wait_for(env.run(task, agents), timeout=60)
        except Exception as exc:  # the observation under test: what the released code raises
            rows.append({"name": task.data.name, "error": f"{type(exc).__name__}: {exc}"})
            continue
        done = agents.player.last
        assert done is not None
        rows.append(
            {
                "name": task.data.name,
                "actions": done.actions,
                "payloads": done.payloads,
                "rewards": {k: v.score for k, v in done.trace.rewards.items()},
                "stop": done.trace.stop_condition,
            }
        )
    return {"tasks": rows}


def main() -> int:
    request = json.loads(sys.stdin.read())
    sys.stdout.write(json.dumps(asyncio.run(play(request))) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
