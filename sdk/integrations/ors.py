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
  own `_call_tool` (what `ors.Server` calls: its input model validates the arguments, after
  mcpgym's schema check); a `ToolOutput`'s inline `reward` → the step's reward, `finished` →
  `done`; an ORS `RunToolError` → an `execution_error` tool error.

The adapter is async (`areset` / `astep` / `aclose`, as every mcpgym server calls it); ORS class
methods that are coroutines are awaited there, and in a worker thread for the task API.
Requires `pip install mcpgym[ors]`.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, ClassVar

from mcpgym.dynamic_tools import DynamicTool, DynamicToolsEnvironment
from mcpgym.errors import ToolError
from mcpgym.tasks import Split, Task, TaskNotFound, TaskSet
from mcpgym.types import Action, Observation

__all__ = ["ORSTaskSet", "ors_environment"]


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
            if isinstance(split, str):
                out.append(Split(name=split, type="validation"))
            else:
                out.append(Split(name=split.name, type=split.type))
        return out

    def list_tasks(self, split: str) -> list[Task]:
        names = [s.name for s in self.list_splits()]
        if split not in names:
            raise TaskNotFound(
                f"no split {split!r}; splits: {', '.join(names)}",
                errors=[{"field": "split", "got": split, "expected": names}],
            )
        specs = list(_sync(self._cls.list_tasks(split)))
        return [
            {"id": f"{split}/{i}", "split": split, "index": i, "reset": {"task_spec": spec}}
            for i, spec in enumerate(specs)
        ]


class _ORSAdapter(DynamicToolsEnvironment):
    ors_class: ClassVar[Any]
    task_set: ClassVar[TaskSet]
    _ors: Any = None
    _reward: float | None = None

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
            DynamicTool(
                t.name,
                _object(t.input_schema),
                description=t.description,
            )
            for t in tools
        )
        obs.metadata["prompt"] = [block.model_dump(mode="json") for block in prompt]
        obs.metadata["task_spec"] = spec
        return obs

    async def dispatch_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        if self._ors is None:
            raise ToolError("reset the environment first", tool=name)
        ran = (await self._ors._call_tool(name, arguments)).root
        if not ran.ok:
            raise ToolError(ran.error, tool=name)
        out = ran.output
        self._reward = out.reward
        if out.finished:
            self.end_episode()
        return out.model_dump(mode="json")

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
