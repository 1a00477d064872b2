"""Run by the *openenv* virtual environment's Python: drives a server with the released openenv
package's `MCPToolClient` (production `/mcp` dialect) or a typed `EnvClient` subclass written the
way OpenEnv's README writes one, and prints one JSON line per operation.

Usage:
    python openenv_tools_driver.py tools URL CALLS_JSON [TOKEN]
    python openenv_tools_driver.py typed URL ACTIONS_JSON RESET_JSON

`CALLS_JSON` is a list of `[tool_name, arguments]`. Exit 0 on success, 1 on any failure (the
failing operation's line carries the error).
"""

import asyncio
import json
import sys
from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.types import Action, Observation, State
from openenv.core.mcp_client import MCPToolClient


def emit(row: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(row, default=str) + "\n")
    sys.stdout.flush()


async def tools(url: str, calls: list, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    op = "connect"
    try:
        async with MCPToolClient(base_url=url, message_timeout_s=30, headers=headers) as env:
            op = "list_tools"
            listed = await env.list_tools()
            emit({"op": op, "tools": sorted(t.name for t in listed)})
            for name, arguments in calls:
                op = f"call:{name}"
                try:
                    value = await env.call_tool(name, **arguments)
                    emit({"op": op, "result": value})
                except RuntimeError as exc:  # how OpenEnv reports a failing tool
                    emit({"op": op, "raised": str(exc)})
            op = "close"
        emit({"op": "closed"})
    except Exception as exc:
        emit({"op": op, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    return 0


class GuessAction(Action):
    """A typed action, as an OpenEnv environment package defines one."""

    tool_name: str
    arguments: dict[str, Any] = {}


class GuessObservation(Observation):
    tool_name: str | None = None
    result: Any = None
    error: dict[str, Any] | None = None


class GuessClient(EnvClient[GuessAction, GuessObservation, State]):
    """The three hooks an OpenEnv typed client implements, nothing else."""

    def _step_payload(self, action: GuessAction) -> dict[str, Any]:
        return {"type": "call_tool", "tool_name": action.tool_name, "arguments": action.arguments}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[GuessObservation]:
        obs = payload.get("observation", {})
        observation = GuessObservation(
            tool_name=obs.get("tool_name"),
            result=obs.get("result"),
            error=obs.get("error"),
            done=payload.get("done", False),
            reward=payload.get("reward"),
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(episode_id=payload.get("episode_id"), step_count=payload.get("step_count", 0))


def typed(url: str, actions: list, reset: dict) -> int:
    op = "connect"
    try:
        with GuessClient(base_url=url, message_timeout_s=30).sync() as env:
            op = "reset"
            r = env.reset(**reset)
            emit({"op": op, "done": r.done, "type": type(r.observation).__name__})
            for i, action in enumerate(actions):
                op = f"step{i}"
                r = env.step(GuessAction(**action))
                emit(
                    {
                        "op": op,
                        "type": type(r.observation).__name__,
                        "tool_name": r.observation.tool_name,
                        "result": r.observation.result,
                        "error": r.observation.error,
                        "reward": r.reward,
                        "done": r.done,
                    }
                )
            op = "state"
            state = env.state()
            emit(
                {
                    "op": op,
                    "type": type(state).__name__,
                    "episode_id": state.episode_id,
                    "step_count": state.step_count,
                }
            )
    except Exception as exc:
        emit({"op": op, "error": f"{type(exc).__name__}: {exc}"})
        return 1
    return 0


def main() -> int:
    kind, url = sys.argv[1], sys.argv[2]
    if kind == "tools":
        token = sys.argv[4] if len(sys.argv) > 4 else None
        return asyncio.run(tools(url, json.loads(sys.argv[3]), token))
    return typed(url, json.loads(sys.argv[3]), json.loads(sys.argv[4]))


if __name__ == "__main__":
    sys.exit(main())
