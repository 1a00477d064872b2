"""Bridge backend `verifiers-v1`: a Verifiers 0.4.0 `verifiers.v1` taskset, at tool level.

TARGET is a `Taskset` instance or a factory returning one (options `taskset_args` as its
keyword arguments). Each episode is one task (reset options `index`, default 0, its position
in the taskset's iteration). The task's and the taskset's toolsets are the MCP servers
Verifiers would launch: each is set up (`setup`, `setup_task`), registered on an in-process
`MCPServer` and called through the official `mcp` client over an in-memory transport. Their
tools are published as `<server>_<tool>` (the prefix Verifiers advertises; bare for
`TOOL_PREFIX = None`) with the server's input schemas, plus `final_answer(content)`. The
worker keeps the transcript (the task's prompt, one assistant tool call and its tool message
per call, the final answer) as a `vf.Trace` and, at the final answer, scores it with the task's
own `score()`: its `@vf.reward` / `@vf.metric` functions. The step's reward is `trace.reward`
(the weighted sum); `rewards` (`{"score", "weight"}` per function) and `metrics` ride in the
result, as the trace reports them. The reset observation is the prompt the model sees; the
task's data (a reference answer) goes to the operator apart (`"operator"`), never the agent.

What does not map: rewards are terminal-only (scored once, at the final answer); runtimes
(sandboxes, containers) are not started, so `Task.setup` / `finalize` do not run and rewards
that need a runtime are skipped, as `Task.score(trace)` itself skips them offline; a toolset's
state lives in the worker (one state per episode, instead of Verifiers' state channel); harness
and `Env.run` logic (multi-agent, user simulators, best-of-n), group scoring and the `Env`'s
`finalize` need whole rollouts; LLM judges (`task.config.judges`) and hub datasets need a
model or network (use local reward functions and in-memory tasks).
"""

# pyright: basic, reportMissingImports=false, reportAttributeAccessIssue=false
from __future__ import annotations

import contextlib
import importlib.metadata
import itertools
import json
from typing import Any

try:
    from . import bridge_wire as wire
except ImportError:  # run by bridge_worker.py: this folder is on sys.path
    import bridge_wire as wire  # pyright: ignore[reportMissingImports]


class Backend:
    """One v1 taskset; one task, its tool servers and its trace per episode."""

    def __init__(self, target: str, options: dict[str, Any]) -> None:
        import verifiers.v1 as vf

        self.vf = vf
        self.library = {"name": "verifiers", "version": importlib.metadata.version("verifiers")}
        made = wire.load_attr(target)
        taskset = made if isinstance(made, vf.Taskset) else made(**options.get("taskset_args", {}))
        if not isinstance(taskset, vf.Taskset):
            raise TypeError(f"{target} is not a verifiers.v1 Taskset: {taskset!r}")
        if not taskset.bounded:
            raise TypeError(f"{target} is infinite: bound it (take / include) for the bridge")
        self.taskset = taskset
        self.tasks = list(taskset)
        self.finish = str(options.get("finish_tool", "final_answer"))
        self.stack: contextlib.AsyncExitStack | None = None
        self.routes: dict[str, tuple[Any, str]] = {}
        self.task: Any = None
        self.trace: Any = None
        self.ids = itertools.count(1)

    async def reset(self, seed: Any, episode_id: Any, options: dict[str, Any]) -> dict[str, Any]:
        await self.close()
        index = int(options.get("index", 0))
        if not 0 <= index < len(self.tasks):
            raise wire.BridgeFailure(
                "protocol", f"no task {index}: the taskset has {len(self.tasks)}"
            )
        task = self.tasks[index]
        self.stack = contextlib.AsyncExitStack()
        servers = [
            *type(self.taskset).toolsets(self.taskset.config),
            *type(task).toolsets(task.config),
        ]
        tools: list[dict[str, Any]] = []
        self.routes = {}
        for server in servers:
            client = await self._open(server, task)
            prefix = server.server_name
            for tool in (await client.list_tools()).tools:
                name = f"{prefix}_{tool.name}" if prefix else tool.name
                self.routes[name] = (client, tool.name)
                tools.append(
                    {
                        "name": name,
                        "description": tool.description or "",
                        "input_schema": dict(tool.input_schema),
                    }
                )
        tools.append(
            {
                "name": self.finish,
                "description": "Give the final answer (the assistant's last reply); ends the "
                "episode, which the task then scores.",
                "input_schema": {
                    "type": "object",
                    "properties": {"content": {"type": "string"}},
                    "required": ["content"],
                    "additionalProperties": False,
                },
            }
        )
        self.task = task
        self.trace = self.vf.Trace(
            task=self.vf.TraceTask(
                type=type(task).__name__, data=task.data, key=task.key, hash=task.hash
            ),
            agent=self.vf.AgentInfo(config=self.vf.AgentConfig(), name="mcpgym-bridge"),
        )
        for message in self._prompt(task):
            self._append(message, sampled=False)
        # the task's data (a reference answer, its info) is the rewards', not the model's
        data = task.data.model_dump(mode="json", exclude_none=True)
        return {
            "tools": tools,
            "observation": {"prompt": [m.model_dump(mode="json") for m in self.trace.messages]},
            "operator": {"task": data},
        }

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.trace is None:
            raise wire.BridgeFailure("no_episode", "no task is running: reset first")
        if name == self.finish:
            self._append(self.vf.AssistantMessage(content=str(arguments.get("content", ""))))
            trace, task, self.trace = self.trace, self.task, None
            await task.score(trace)
            await self.close()
            return {
                "output": None,
                "reward": trace.reward,
                "done": True,
                # as the trace reports them: `{"score", "weight"}` per reward function
                "rewards": {
                    k: (r.model_dump(mode="json") if r is not None else None)
                    for k, r in trace.rewards.items()
                },
                "metrics": dict(trace.metrics),
            }
        route = self.routes.get(name)
        if route is None:
            raise wire.BridgeFailure("unknown_tool", f"Unknown tool: {name!r}")
        client, tool = route
        call_id = f"call_{next(self.ids)}"
        call = self.vf.ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))
        self._append(self.vf.AssistantMessage(tool_calls=[call]))
        result = await client.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        self._append(
            self.vf.ToolMessage(tool_call_id=call_id, content=text, name=name), sampled=False
        )
        if result.is_error:
            raise wire.BridgeFailure("tool", text or f"tool {name!r} failed")
        output = result.structured_content if result.structured_content is not None else text
        if isinstance(output, dict) and set(output) == {"result"}:
            output = output["result"]  # the MCP server's wrapper for a non-object return
        return {"output": wire.jsonable(output), "reward": None, "done": False}

    async def close(self) -> None:
        stack, self.stack = self.stack, None
        if stack is not None:
            await stack.aclose()

    # -- internals ----------------------------------------------------------------------------

    async def _open(self, server: Any, task: Any) -> Any:
        from mcp import Client
        from mcp.server.mcpserver import MCPServer

        # Verifiers syncs a toolset's state with the rollout over an HTTP channel on each call;
        # here the worker is the rollout, so one state object per episode stands in for it.
        state = server._state_cls()
        server._inert_state = state

        async def pull() -> Any:
            return state

        async def push(before: bytes) -> None:
            return None

        server._pull_state, server._push_state = pull, push
        assert self.stack is not None
        await self.stack.enter_async_context(server._exit_stack)
        await server.setup()
        await server.setup_task(task)
        mcp = MCPServer(server.server_name or type(server).__name__)
        server.register(mcp)
        return await self.stack.enter_async_context(Client(mcp))

    def _prompt(self, task: Any) -> list[Any]:
        vf, data = self.vf, task.data
        messages: list[Any] = []
        if data.system_prompt:
            messages.append(vf.SystemMessage(content=data.system_prompt))
        if isinstance(data.prompt, str):
            messages.append(vf.UserMessage(content=data.prompt))
        elif data.prompt:
            messages.extend(data.prompt)
        return messages

    def _append(self, message: Any, sampled: bool = True) -> None:
        nodes = self.trace.nodes
        parent = len(nodes) - 1 if nodes else None
        nodes.append(self.vf.MessageNode(parent=parent, message=message, sampled=sampled))
