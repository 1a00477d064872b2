"""Bridge backend `verifiers-classic`: a Verifiers 0.3.1 `ToolEnv` / `MultiTurnEnv`.

TARGET is an environment instance or a factory returning one (`load_environment`, options
`env_args` as its keyword arguments). Each episode is the environment's real `run_rollout` on
one dataset row, driven by a `vf.Client` that waits for each action from outside: the rollout
asks the client for a model response, the bridge answers with the tool call the agent made,
the environment runs the tool in its own `env_response`, and the next request carries the tool's
message — that is the call's output. The rollout's own rubric scores it when it ends.

- reset options: `index` (the dataset row, default 0), `split` (`"train"`, the default, or
  `"eval"`); the observation is the row's prompt messages (what the model sees); its `answer`
  and `info` go to the operator apart (`"operator"` in the reset result), never to the agent.
- tools: the state's `tool_defs` (name, description, JSON-Schema `parameters`), plus
  `final_answer(content)`, the assistant message without tool calls that ends a `ToolEnv`
  rollout (renamed with the option `finish_tool`).
- reward: `None` for every step but the last; when the rollout ends (a final answer, a stop
  condition, `max_turns`) the step's reward is the rubric's `reward`, `done` is true, and
  `metrics` is the rollout's own `metrics` (every reward function's and metric's score by name,
  as Verifiers reports them).

What does not map: rewards are terminal-only (Verifiers scores the finished rollout; per-step
trajectory rewards are not reported); tool failures are text in the tool message, as the model
would see them, not structured errors; a call made on the turn that reaches `max_turns` is not
run (the rollout stops first, as in Verifiers); group scoring (`score_group`, group reward
functions) needs several rollouts at once and is refused by `score_rollout`; LLM judges and hub
datasets need a model or network (use local reward functions and in-memory datasets).
"""

# pyright: basic, reportMissingImports=false, reportAttributeAccessIssue=false
from __future__ import annotations

import asyncio
import importlib.metadata
import itertools
import json
import time
from typing import Any

try:
    from . import bridge_wire as wire
except ImportError:  # run by bridge_worker.py: this folder is on sys.path
    import bridge_wire as wire  # pyright: ignore[reportMissingImports]


def _vf() -> Any:
    try:
        import verifiers.legacy as vf  # 0.3.x keeps the classic stack here
    except ImportError:
        import verifiers as vf
    return vf


def _waiting_client(vf: Any) -> Any:
    class WaitingClient(vf.Client):
        """A `vf.Client` whose "model" is whoever sends the next action."""

        def __init__(self) -> None:
            super().__init__(None)
            self.requests: asyncio.Queue[tuple[list[Any], list[Any]]] = asyncio.Queue()
            self.actions: asyncio.Queue[Any] = asyncio.Queue()

        def setup_client(self, config: Any) -> Any:
            return None

        async def to_native_tool(self, tool: Any) -> Any:
            return tool

        async def to_native_prompt(self, messages: Any) -> tuple[Any, dict[str, Any]]:
            return messages, {}

        async def get_native_response(
            self, prompt: Any, model: str, sampling_args: Any, tools: Any = None, **kwargs: Any
        ) -> Any:
            await self.requests.put((list(prompt), list(tools or [])))
            return await self.actions.get()

        async def raise_from_native_response(self, response: Any) -> None:
            return None

        async def from_native_response(self, response: Any) -> Any:
            return response

        async def close(self) -> None:
            return None

    return WaitingClient()


class Backend:
    """One Verifiers classic environment, one rollout per episode."""

    def __init__(self, target: str, options: dict[str, Any]) -> None:
        self.vf = _vf()
        self.library = {"name": "verifiers", "version": importlib.metadata.version("verifiers")}
        made = wire.load_attr(target)
        env = made if isinstance(made, self.vf.Environment) else made(**options.get("env_args", {}))
        if not isinstance(env, self.vf.MultiTurnEnv):
            raise TypeError(f"{target} is not a verifiers MultiTurnEnv (ToolEnv): {env!r}")
        self.env = env
        self.finish = str(options.get("finish_tool", "final_answer"))
        self.model = str(options.get("model", "mcpgym-bridge"))
        self.rollout: asyncio.Task[Any] | None = None
        self.client: Any = None
        self.seen = 0
        self.ids = itertools.count(1)

    async def reset(self, seed: Any, episode_id: Any, options: dict[str, Any]) -> dict[str, Any]:
        await self._cancel()
        split, index = options.get("split", "train"), int(options.get("index", 0))
        dataset = self.env.get_eval_dataset() if split == "eval" else self.env.get_dataset()
        if not 0 <= index < len(dataset):
            raise wire.BridgeFailure("protocol", f"no row {index} in the {split} dataset")
        row = dict(dataset[index])
        row.setdefault("example_id", index)
        self.client = _waiting_client(self.vf)
        self.rollout = asyncio.ensure_future(self.env.run_rollout(row, self.client, self.model, {}))
        prompt, tools = await self._next_request()
        if prompt is None:
            raise wire.BridgeFailure("internal", "the rollout ended before its first turn")
        self.seen = len(prompt)
        specs = [
            {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
            for t in tools
        ]
        specs.append(
            {
                "name": self.finish,
                "description": "Give the final answer (an assistant message without tool calls); "
                "ends the episode, which is then scored.",
                "input_schema": {
                    "type": "object",
                    "properties": {"content": {"type": "string"}},
                    "required": ["content"],
                    "additionalProperties": False,
                },
            }
        )
        # the row's `answer` and `info` are the rubric's, not the model's: operator-only
        operator = {
            "answer": wire.jsonable(row.get("answer")),
            "info": wire.jsonable(row.get("info")),
        }
        return {
            "tools": specs,
            "observation": {"prompt": wire.jsonable(prompt)},
            "operator": operator,
        }

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.rollout is None or self.rollout.done():
            raise wire.BridgeFailure("no_episode", "no rollout is running: reset first")
        call_id = f"call_{next(self.ids)}"
        if name == self.finish:
            message = self._response(str(arguments.get("content", "")), None)
        else:
            tool_call = self.vf.ToolCall(id=call_id, name=name, arguments=json.dumps(arguments))
            message = self._response(None, [tool_call])
        await self.client.actions.put(message)
        prompt, _ = await self._next_request()
        if prompt is None:  # the rollout ended: score it
            output = await self.rollout
            self.rollout = None
            return {
                "output": None,
                "reward": output.get("reward"),
                "done": True,
                "metrics": wire.jsonable(output.get("metrics")),
            }
        new, self.seen = prompt[self.seen :], len(prompt)
        replies = [m for m in new if getattr(m, "tool_call_id", None) == call_id]
        content = replies[0].content if replies else [wire.jsonable(m) for m in new]
        return {"output": wire.jsonable(content), "reward": None, "done": False}

    async def close(self) -> None:
        await self._cancel()

    def _response(self, content: str | None, tool_calls: list[Any] | None) -> Any:
        message = self.vf.ResponseMessage(
            content=content,
            tool_calls=tool_calls,
            is_truncated=False,
            finish_reason="tool_calls" if tool_calls else "stop",
        )
        return self.vf.Response(
            id=f"bridge-{next(self.ids)}",
            created=int(time.time()),
            model=self.model,
            message=message,
        )

    async def _next_request(self) -> tuple[Any, Any]:
        """The rollout's next model request, or `(None, None)` once the rollout has ended."""
        assert self.rollout is not None
        asked = asyncio.ensure_future(self.client.requests.get())
        await asyncio.wait({asked, self.rollout}, return_when=asyncio.FIRST_COMPLETED)
        if asked.done():
            return asked.result()
        asked.cancel()
        error = self.rollout.exception()
        if error is not None:
            raise wire.BridgeFailure("internal", f"the rollout failed: {error!r}")
        return None, None

    async def _cancel(self) -> None:
        task, self.rollout = self.rollout, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
