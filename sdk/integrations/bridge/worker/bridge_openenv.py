"""Bridge backend `openenv`: an OpenEnv 0.10.0 environment class, in the worker's venv.

TARGET is the class (or a zero-argument factory of an instance). One instance serves every
episode of the worker, as one OpenEnv server session would; `reset(seed=, episode_id=,
**options)` is the class's own.

What maps:
- an `MCPEnvironment` (OpenEnv's FastMCP-based class): its tools (`ListToolsAction` at each
  reset) → the bridged tools with their input schemas; a call is `step(CallToolAction(...))`,
  the class's own `step`, so a subclass that scores in `step` is honoured; the observation's
  `reward` and `done` → the step's; its `CallToolObservation.error` → the matching tool error
  (`invalid_args`, `tool_not_found`, else `execution_error`); the tool's output is the FastMCP
  result's `data` (else its structured content, else its text);
- a plain `Environment`: one tool, `act`, whose input schema is the action class's JSON schema
  (option `action`: `MODULE:ATTR` of the class; default: the class's `Environment[Act, ...]`
  parameter); its output is the observation less `reward` / `done` / `metadata`.

What does not map (an `unsupported` error says so): OpenEnv's code mode (`execute_code`),
`Rubric` transforms that score only after the episode (terminal-only rewards arrive with the
step that ends it, if the class puts them there, else never), and concurrent sessions on one
instance (each mcpgym session has its own worker).
"""

# pyright: basic, reportMissingImports=false, reportAttributeAccessIssue=false
from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import typing
from typing import Any

try:
    from . import bridge_wire as wire
except ImportError:  # run by bridge_worker.py: this folder is on sys.path
    import bridge_wire as wire  # pyright: ignore[reportMissingImports]

_KINDS = {"invalid_args": "invalid_args", "tool_not_found": "unknown_tool"}


class Backend:
    """The worker's view of one OpenEnv environment instance."""

    def __init__(self, target: str, options: dict[str, Any]) -> None:
        from openenv.core.env_server.interfaces import Environment
        from openenv.core.env_server.mcp_environment import MCPEnvironment

        self.library = {"name": "openenv", "version": importlib.metadata.version("openenv")}
        made = wire.load_attr(target)
        self.env = made() if callable(made) else made
        if not isinstance(self.env, Environment):
            raise TypeError(f"{target} is not an OpenEnv Environment class: {made!r}")
        self.is_mcp = isinstance(self.env, MCPEnvironment)
        self.action_cls: Any = None
        if not self.is_mcp:
            spec = options.get("action")
            self.action_cls = wire.load_attr(spec) if spec else _action_class(type(self.env))
            if self.action_cls is None:
                raise TypeError(f"{target}: name its action class with the option 'action'")
        self.started = False

    async def reset(self, seed: Any, episode_id: Any, options: dict[str, Any]) -> dict[str, Any]:
        obs = await self._call("reset", seed=seed, episode_id=episode_id, **options)
        self.started = True
        if self.is_mcp:
            from openenv.core.env_server.mcp_types import ListToolsAction

            listed = await self._step(ListToolsAction())
            if listed.metadata.get("error_type") == "list_tools_failed":
                raise wire.BridgeFailure("internal", f"list_tools failed: {listed.metadata}")
            tools = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in listed.tools
            ]
        else:
            schema = self.action_cls.model_json_schema()
            schema.get("properties", {}).pop("metadata", None)
            tools = [
                {
                    "name": "act",
                    "description": inspect.getdoc(self.action_cls) or "",
                    "input_schema": schema,
                }
            ]
        return {"tools": tools, "observation": wire.jsonable(obs)}

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if not self.started:
            raise wire.BridgeFailure("no_episode", "reset first")
        if self.is_mcp:
            from openenv.core.env_server.mcp_types import CallToolAction

            obs = await self._step(CallToolAction(tool_name=name, arguments=arguments))
            error = getattr(obs, "error", None)
            if error is not None:
                kind = getattr(error.error_type, "value", str(error.error_type))
                raise wire.BridgeFailure(_KINDS.get(kind, "tool"), error.message, openenv=kind)
            output = _output(obs.result)
        else:
            if name != "act":
                raise wire.BridgeFailure("unknown_tool", f"Unknown tool: {name!r}")
            from pydantic import ValidationError

            try:
                action = self.action_cls.model_validate(arguments)
            except ValidationError as exc:
                raise wire.BridgeFailure("invalid_args", str(exc)) from None
            obs = await self._step(action)
            output = wire.jsonable(obs)
            for key in ("reward", "done", "metadata"):
                output.pop(key, None)
        return {"output": output, "reward": obs.reward, "done": bool(obs.done)}

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if callable(close):
            close()

    async def _step(self, action: Any) -> Any:
        return await self._call("step", action)

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """`reset` / `step` as OpenEnv's own server calls them: the `*_async` method when the
        class overrides the base one (MCPEnvironment does), else the sync one in a thread."""
        from openenv.core.env_server.interfaces import Environment

        method = getattr(self.env, f"{name}_async", None)
        base = getattr(Environment, f"{name}_async", None)
        if method is not None and getattr(method, "__func__", None) is not base:
            return await method(*args, **kwargs)
        sync = getattr(self.env, name)
        return await asyncio.to_thread(lambda: sync(*args, **kwargs))


def _output(result: Any) -> Any:
    """A FastMCP `CallToolResult` as JSON: its data, else structured content, else text."""
    if result is None:
        return None
    data = getattr(result, "data", None)
    if data is not None:
        return wire.jsonable(data)
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return wire.jsonable(structured)
    content = getattr(result, "content", None)
    if isinstance(content, list):
        return "".join(str(getattr(block, "text", "")) for block in content)
    return wire.jsonable(result)


def _action_class(cls: type) -> Any:
    """The `Act` of `class X(Environment[Act, Obs, State])`, searched through the bases."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            args = typing.get_args(base)
            if args and inspect.isclass(args[0]) and hasattr(args[0], "model_json_schema"):
                return args[0]
    return None
