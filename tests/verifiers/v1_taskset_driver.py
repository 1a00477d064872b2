"""Run by the *verifiers* virtual environment's Python (verifiers 0.4.0), not mcpgym's: plays the
taskset `mcpgym export verifiers` generated, with verifiers' own machinery and no model.

Reads `{"taskset_id", "rollouts": [{"task", "plan", "unbound"?, "stops"?}]}` as JSON on stdin,
prints `{"rollouts": [{"task", "name", "reset", "prompt", "episode", "tools", "tools_url",
"calls", "results", "stopped"?, "reward" | "error"}]}` (or `{"error"}`). A `plan` is a list of
`[tool, arguments]`, or `{"bisect": [low, high]}`: guess by bisection on the answers the
rollout's tools give, the way a model plays. After each call the task's `@vf.stop`s run through
verifiers' `RolloutSession.refused`, as before a model turn (`"stops": false` skips them, as for
calls made in one turn); the rollouts run concurrently, each in its own asyncio task, as
verifiers runs them.

Each rollout does what `Rollout.open` does, in its order (checked against its source): a real
`Trace` with the task's state class, the task's `setup` (through verifiers' `invoke`), then
`Task.toolsets` on the task's config (`unbound`: before `setup`, as if it had no rollout in
reach); `serve_tools` turns them into the URLs a harness gets; `connect_mcp` lists the tools as
the harness does (native function specs) and `call_mcp` calls them; the calls and results go
into the trace as assistant tool calls and tool messages, and `Task.score` runs the taskset's
reward functions on it.
"""

import asyncio
import contextlib
import inspect
import json
import sys
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.graph import MessageNode
from verifiers.v1.harnesses.utils.mcp import call_mcp, connect_mcp
from verifiers.v1.mcp import serve_tools
from verifiers.v1.rollout import Rollout
from verifiers.v1.runtimes import SubprocessConfig, make_runtime
from verifiers.v1.session import RolloutSession, hook_boundary
from verifiers.v1.state import state_cls
from verifiers.v1.trace import AgentInfo, TraceTask
from verifiers.v1.utils.decorators import invoke


def _verdict(content: Any) -> str | None:
    try:
        data = json.loads(content) if isinstance(content, str) else None
    except json.JSONDecodeError:
        return None
    return data.get("verdict") if isinstance(data, dict) else None


async def rollout(task: Any, spec: dict[str, Any]) -> dict[str, Any]:
    trace = vf.Trace(
        task=TraceTask(type=type(task).__name__, data=task.data),
        state=state_cls(type(task))(),
        agent=AgentInfo(config=vf.AgentConfig()),
    )
    # verifiers' own stop machinery, built as `Rollout.__init__` builds it
    stops = [(hook_boundary(fn, allow_trace=True), fn) for fn in task.hooks("stop")]
    session = RolloutSession(
        ctx=None,  # type: ignore[arg-type]  # no model: `refused` never reads it
        trace=trace,
        trace_stops=[fn for boundary, fn in stops if boundary is vf.Trace],
    )
    toolsets = task.toolsets(task.config) if spec.get("unbound") else None
    await invoke(task.setup, {"trace": trace, "runtime": None})
    toolsets = toolsets or task.toolsets(task.config)
    out: dict[str, Any] = {
        "task": spec["task"],
        "name": task.data.name,
        "reset": task.data.reset,
        "prompt": task.data.prompt,
        "episode": trace.state.mcpgym_episode,
        "calls": [],
        "results": [],
    }
    nodes = [MessageNode(message=vf.UserMessage(content=task.data.prompt or ""))]
    plan = spec["plan"]
    low, high = plan["bisect"] if isinstance(plan, dict) else (0, 0)
    async with contextlib.AsyncExitStack() as stack:
        if spec.get("unbound"):  # what its tools would reach: the test asks the server itself
            out["tools_url"] = [t.config.url for t in toolsets]
            schemas, dispatch, conns = [], {}, {}
        else:  # one MCP connection per rollout, as one rollout's harness holds
            # `serve_tools` is what hands a rollout's harness its tool servers' URLs
            runtime = make_runtime(SubprocessConfig(), name=trace.id)
            urls = await stack.enter_async_context(serve_tools(toolsets, runtime))
            config = {"mcpServers": {name: {"url": url} for name, url in urls.items()}}
            out["tools_url"] = list(urls.values())
            schemas, dispatch, conns = await connect_mcp(config, stack)
        out["tools"] = schemas
        steps = [None] * 10 if isinstance(plan, dict) else list(plan)
        then = list(plan.get("then", [])) if isinstance(plan, dict) else []
        while steps:
            step = steps.pop(0)
            name, arguments = ("guess", {"n": (low + high) // 2}) if step is None else step
            i = len(out["calls"])
            call = vf.ToolCall(id=f"c{i}", name=name, arguments=json.dumps(arguments))
            nodes.append(
                MessageNode(
                    parent=len(nodes) - 1,
                    message=vf.AssistantMessage(tool_calls=[call]),
                    sampled=True,
                )
            )
            if name in dispatch:
                content = await call_mcp(conns, dispatch, name, arguments)
            else:
                content = f"no tool {name!r}"  # what a harness answers without calling MCP
            out["calls"].append([name, arguments])
            out["results"].append(content)
            nodes.append(
                MessageNode(
                    parent=len(nodes) - 1,
                    message=vf.ToolMessage(tool_call_id=call.id, content=content),
                )
            )
            if spec.get("stops", True) and (stopped := await session.refused()):
                out["stopped"] = stopped  # checked before the next model turn, as verifiers does
                break
            if step is None:  # bisection: the next guess from this answer
                verdict = _verdict(content)
                if verdict in ("higher", "lower"):
                    n = arguments["n"]
                    low, high = (n + 1, high) if verdict == "higher" else (low, n - 1)
                else:
                    steps = then
    trace.nodes = nodes
    try:
        await task.score(trace)
    except Exception as err:  # the test checks the message
        out["error"] = f"{type(err).__name__}: {err}"
        return out
    reward = trace.rewards["mcpgym_reward"]
    out["reward"] = None if reward is None else reward.score
    return out


def check_rollout_order() -> None:
    """The taskset's binding rests on `Rollout.open` running the task's `setup` and then
    `Task.toolsets` in one asyncio task (a context variable carries the episode between them)."""
    source = inspect.getsource(Rollout.open)
    setup, toolsets = source.index("self.task.setup"), source.index("self.task.toolsets(")
    assert setup < toolsets, "Rollout.open builds the toolsets before the task's setup"
    between = source[setup:toolsets]
    assert "create_task" not in between and "gather" not in between, between


async def play(request: dict[str, Any]) -> dict[str, Any]:
    check_rollout_order()
    taskset = vf.load_taskset(vf.TasksetConfig(id=request["taskset_id"]))
    tasks = list(taskset)
    assert not type(taskset).toolsets(taskset.config), "the tools are per rollout, not shared"
    runs = [asyncio.create_task(rollout(tasks[s["task"]], s)) for s in request["rollouts"]]
    return {"rollouts": list(await asyncio.gather(*runs))}


def main() -> None:
    request = json.load(sys.stdin)
    try:
        out = asyncio.run(play(request))
    except Exception as err:  # reported to the test, which checks the message
        out = {"error": f"{type(err).__name__}: {err}"}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
