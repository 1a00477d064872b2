"""Run by the *verifiers* virtual environment's Python (verifiers 0.4.0), not mcpgym's: plays the
taskset `mcpgym export verifiers` generated, with verifiers' own machinery and no model.

Reads `{"taskset_id", "plans"}` as JSON on stdin (`plans`: one list of `[tool, arguments]` per
task) and prints `{"tools": [...], "tasks": [{"name", "reset", "prompt", "results", "reward"}]}`
or `{"error": "..."}`.

Everything between the script and the server is verifiers' code: `load_taskset` imports the
installed package by its id, `serve_shared` brings up the taskset's tool servers (an external
URL: nothing launched), `connect_mcp` lists the tools as the harness does (native function
specs) and `call_mcp` calls them; the calls and results go into a real `Trace` as assistant tool
calls and tool messages, and `Task.score` runs the taskset's reward functions on it.
"""

import asyncio
import contextlib
import json
import sys
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.graph import MessageNode
from verifiers.v1.harnesses.utils.mcp import call_mcp, connect_mcp
from verifiers.v1.mcp import serve_shared
from verifiers.v1.trace import AgentInfo, TraceTask


async def play(request: dict[str, Any]) -> dict[str, Any]:
    taskset = vf.load_taskset(vf.TasksetConfig(id=request["taskset_id"]))
    tasks = list(taskset)
    out: dict[str, Any] = {"tasks": []}
    async with serve_shared(type(taskset).toolsets(taskset.config)) as servers:
        for task, plan in zip(tasks, request["plans"], strict=True):
            config = {"mcpServers": {name: {"url": s.url} for name, s in servers.items()}}
            async with contextlib.AsyncExitStack() as stack:
                # one MCP connection per episode, as one rollout's harness holds
                schemas, dispatch, conns = await connect_mcp(config, stack)
                out["tools"] = schemas
                nodes = [MessageNode(message=vf.UserMessage(content=task.data.prompt or ""))]
                results = []
                for i, (name, arguments) in enumerate(plan):
                    call = vf.ToolCall(id=f"c{i}", name=name, arguments=json.dumps(arguments))
                    nodes.append(
                        MessageNode(
                            parent=len(nodes) - 1,
                            message=vf.AssistantMessage(tool_calls=[call]),
                            sampled=True,
                        )
                    )
                    content = await call_mcp(conns, dispatch, name, arguments)
                    results.append(content)
                    nodes.append(
                        MessageNode(
                            parent=len(nodes) - 1,
                            message=vf.ToolMessage(tool_call_id=call.id, content=content),
                        )
                    )
            trace = vf.Trace(
                task=TraceTask(type=type(task).__name__, data=task.data),
                agent=AgentInfo(config=vf.AgentConfig()),
                nodes=nodes,
            )
            await task.score(trace)
            reward = trace.rewards["mcpgym_reward"]
            out["tasks"].append(
                {
                    "name": task.data.name,
                    "reset": task.data.reset,
                    "prompt": task.data.prompt,
                    "results": results,
                    "reward": None if reward is None else reward.score,
                }
            )
    return out


def main() -> None:
    request = json.load(sys.stdin)
    try:
        out = asyncio.run(play(request))
    except Exception as err:  # reported to the test, which checks the message
        out = {"error": f"{type(err).__name__}: {err}"}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
