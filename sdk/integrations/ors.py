"""An ORS environment class (`ors-sdk` 0.1.0, module `ors`) served as an mcpgym environment.

    >>> Served = ors_environment(MyORSEnv)      # doctest: +SKIP
    >>> app = create_app(Served)                 # doctest: +SKIP

What maps (the ORS class is used unchanged):

- splits and tasks (`list_splits`, `list_tasks`) → the task API (`task_set`); task `i` of split
  `s` has id `"s/i"` and resets with `{"task_spec": <the ORS task>}`, so `reset(split=, index=)`,
  `reset(task_id=)` and `reset(task_spec=)` all start one;
- `setup` → reset (a fresh ORS instance per episode; the previous one is torn down), `teardown`
  → the next reset and close;
- `get_prompt()` → the reset observation's `metadata["prompt"]` (the ORS blocks as JSON);
- ORS tools (shared ones and `list_task_tools`) → dynamic tools, called through the ORS class's
  own `_call_tool` (what `ors.Server` calls); the arguments are validated by the tool's own input
  model alone (as ORS does: its coercions, its unknown fields ignored), and a refusal is an
  `invalid_args` tool error. A `ToolOutput`'s blocks are the result, as content (text and image
  blocks one for one), its `metadata` the observation's metadata, its inline `reward` the step's
  reward and `finished` → `done`; any other ORS `RunToolError` is an `execution_error`.

On the ORS wire (`mcpgym serve --ors --ors-wire`) the environment answers as `ors.Server` does,
through three hooks that `mcpgym.servers.ors.routes` reads: `ors_tools()` (the class's tools,
listed before any session, exactly as `Environment.list_tools()` lists them), the instance's
`ors_session_tools()` (shared and task tools) and each call observation's `ors_output` (the
ORS `RunToolOutput` itself: blocks with their `detail`, `metadata`) or `ors_raised` (a tool
that raised: the call's stream is an error, as ORS's own); the task routes serve the
class's own task specs (`ORSTaskSet.ors_task_spec`) and `/create` takes any task spec, as ORS's.

The adapter is async (`areset` / `astep` / `aclose`, as every mcpgym server calls it); ORS class
methods that are coroutines are awaited there, and in a worker thread for the task API.
Requires `pip install mcpgym[ors]`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import PrivateAttr

from mcpgym.content import ContentBlocks
from mcpgym.dynamic_tools import DynamicTool, DynamicToolsEnvironment
from mcpgym.errors import InvalidToolArguments, ToolError, ToolExecutionError
from mcpgym.tasks import Split, Task, TaskSet
from mcpgym.types import Action, CallToolAction, CallToolObservation, Observation

__all__ = ["ORSTaskSet", "ORSToolObservation", "ors_environment"]

_INVALID_INPUT = "Tool input validation error"  # how ORS's `_call_tool` words a refused input


def _sync(value: Any) -> Any:
    """An ORS class method's value (its coroutine run to the end in a fresh event loop)."""
    return asyncio.run(value) if inspect.isawaitable(value) else value  # type: ignore[arg-type]


async def _await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class ORSTaskSet(TaskSet):
    """An ORS class's splits and tasks as an mcpgym task set (sync: run in a worker thread)."""

    def __init__(self, ors_cls: Any) -> None:
        self._cls = ors_cls

    def list_splits(self) -> list[Split]:
        out: list[Split] = []
        for split in _sync(self._cls.list_splits()):
            if isinstance(split, str):  # ORS's own reading of a bare name
                kind = split if split in ("train", "validation", "test") else "validation"
                out.append(Split(name=split, type=kind))  # type: ignore[arg-type]
            else:
                out.append(Split(name=split.name, type=split.type))
        return out

    def list_tasks(self, split: str) -> list[Task]:
        self.check_split(split)
        try:
            specs = list(_sync(self._cls.list_tasks(split)))
        except NotImplementedError:  # ORS's index-based API: num_tasks and get_task
            return super().list_tasks(split)
        return [self._task(split, i, spec) for i, spec in enumerate(specs)]

    def num_tasks(self, split: str) -> int:
        return int(_sync(self._cls.num_tasks(self.check_split(split))))

    def load_task(self, split: str, index: int) -> Task:
        return self._task(split, index, _sync(self._cls.get_task(split, index)))

    @staticmethod
    def _task(split: str, index: int, spec: Any) -> Task:
        return {
            "id": f"{split}/{index}",
            "split": split,
            "index": index,
            "reset": {"task_spec": spec},
        }

    @staticmethod
    def ors_task_spec(task: Task) -> Any:
        """The ORS class's own task spec of one of this set's tasks (what ORS lists)."""
        return task["reset"]["task_spec"]

    @staticmethod
    def ors_reset(task_spec: Mapping[str, Any]) -> dict[str, Any]:
        """The reset options of any ORS task spec (ORS's `/create` takes one not listed too)."""
        return {"task_spec": dict(task_spec)}


class ORSToolObservation(CallToolObservation):
    """A call's observation that also keeps the ORS `RunToolOutput` (JSON) it came from."""

    _ors_output: dict[str, Any] | None = PrivateAttr(default=None)
    _ors_raised: str | None = PrivateAttr(default=None)

    @property
    def ors_raised(self) -> str | None:
        """The error of a tool that raised (`ors.Server` streams it as the call's error)."""
        return self._ors_raised

    @property
    def ors_output(self) -> dict[str, Any] | None:
        """The ORS answer, its `reward` and `finished` the step's own (`None`: none ran)."""
        out = self._ors_output
        if out is None or not out.get("ok"):
            return out
        return {**out, "output": {**out["output"], "reward": self.reward, "finished": self.done}}


class _ORSTool(DynamicTool):
    """An ORS tool: listed with its JSON Schema, validated by its own input model when called."""

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(arguments or {})}


def _content(blocks: Any) -> ContentBlocks:
    out = ContentBlocks()
    for block in blocks:
        if block.type == "image":
            out.append({"type": "image", "data": block.data, "mimeType": block.mimeType})
        else:
            out.append({"type": "text", "text": block.text})
    return out


class _ORSAdapter(DynamicToolsEnvironment):
    ors_class: ClassVar[Any]
    task_set: ClassVar[TaskSet]
    _ors: Any = None
    _reward: float | None = None
    _ran: Any = None  # the last call's ORS RunToolOutput
    _meta: dict[str, Any] | None = None
    _raised: str | None = None

    @classmethod
    def ors_tools(cls) -> list[dict[str, Any]]:
        """The class's tools as ORS lists them before any session (`GET /{env}/tools`)."""
        return cls.ors_class.list_tools().model_dump(mode="json")["tools"]

    def ors_session_tools(self) -> list[dict[str, Any]]:
        """This episode's tools as ORS lists them (`GET /{env}/task_tools`)."""
        if self._ors is None:
            return self.ors_tools()
        shared = self._ors.list_tools().model_dump(mode="json")["tools"]
        return shared + self._ors.list_task_tools().model_dump(mode="json")["tools"]

    async def areset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        options = await asyncio.to_thread(self.task_set.resolve_reset, kwargs)
        obs = await super().areset(seed=seed, episode_id=episode_id)
        await self._teardown()
        spec = options.get("task_spec") or {}
        ors_env = self.ors_class(task_spec=spec)
        await _await(ors_env.setup())
        self._ors = ors_env
        self._reward = None
        prompt = await _await(ors_env.get_prompt())
        tools = [*self.ors_class.list_tools().tools, *ors_env.list_task_tools().tools]
        self.publish_tools(
            _ORSTool(t.name, _object(t.input_schema), description=t.description) for t in tools
        )
        obs.metadata["prompt"] = [block.model_dump(mode="json") for block in prompt]
        obs.metadata["task_spec"] = spec
        return obs

    async def dispatch_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        if self._ors is None:
            raise ToolError("reset the environment first", tool=name)
        try:
            ran = await self._ors._call_tool(name, arguments)
        except Exception as exc:
            self._raised = f"{type(exc).__name__}: {exc}"
            raise
        self._ran = ran
        if not ran.root.ok:
            error = ran.root.error
            cls = InvalidToolArguments if error.startswith(_INVALID_INPUT) else ToolExecutionError
            raise cls(error, tool=name)
        out = ran.root.output
        self._reward = out.reward
        self._meta = dict(out.metadata) if out.metadata is not None else None
        if out.finished:
            self.end_episode()
        return _content(out.blocks)

    async def astep(
        self, action: Any, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        self._ran = self._meta = self._raised = None
        obs = await super().astep(action, timeout_s=timeout_s, **kwargs)
        ran, self._ran = self._ran, None
        raised, self._raised = self._raised, None
        if not isinstance(action, CallToolAction) or type(obs) is not CallToolObservation:
            return obs
        meta, self._meta = self._meta, None
        if meta:
            obs.metadata.update(meta)
        out = ORSToolObservation.model_construct(**dict(obs))
        if ran is not None and obs.tool_name == action.tool_name:
            out._ors_output = ran.model_dump(mode="json")  # pyright: ignore[reportPrivateUsage]
        out._ors_raised = raised  # pyright: ignore[reportPrivateUsage]
        return out

    def reward(self, action: Action, observation: Observation) -> float | None:
        reward, self._reward = self._reward, None
        return reward

    async def aclose(self) -> None:
        await self._teardown()
        await super().aclose()

    async def _teardown(self) -> None:
        ors_env, self._ors = self._ors, None
        if ors_env is not None:
            await _await(ors_env.teardown())


def _object(schema: Any) -> dict[str, Any]:
    # ORS tools without an input model have no schema: they take no arguments.
    if not schema:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    return {"type": "object", **dict(schema)}


def ors_environment(ors_cls: Any) -> type[DynamicToolsEnvironment]:
    """The mcpgym environment class serving the ORS environment class `ors_cls` unchanged."""
    from ors import Environment as ORSEnvironment  # pyright: ignore[reportMissingImports, reportAttributeAccessIssue]

    if not (inspect.isclass(ors_cls) and issubclass(ors_cls, ORSEnvironment)):
        raise TypeError(f"not an ors.Environment subclass: {ors_cls!r}")
    name = f"{ors_cls.__name__}"
    attrs: dict[str, Any] = {
        "ors_class": ors_cls,
        "task_set": ORSTaskSet(ors_cls),
        "__doc__": inspect.getdoc(ors_cls) or f"The ORS environment {ors_cls.__name__}.",
        "__module__": ors_cls.__module__,
    }
    return type(name, (_ORSAdapter,), attrs)
