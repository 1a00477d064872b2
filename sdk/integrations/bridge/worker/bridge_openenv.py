"""Bridge backend `openenv`: an OpenEnv environment (openenv 0.10 or openenv-core), in its venv.

TARGET is what an OpenEnv user already has: the `Environment` class (plain or `MCPEnvironment`),
a factory of an instance, or the FastAPI app that OpenEnv's `create_app` / `create_fastapi_app`
built (`server.app:app`; the factory and action class are the ones that app was given). One
instance serves every episode of the worker, as one OpenEnv server session would.

The episode is OpenEnv's own, on the same library functions OpenEnv's server uses:
- `reset`: the keyword arguments the client sent, filtered by the signature of the method that
  runs (`reset_async` when the class overrides it, else `reset`), as OpenEnv's server does; so a
  `reset(self)` without `seed` works. The reply is OpenEnv's `serialize_observation` of it.
- `step`: the raw action object, read by OpenEnv's `deserialize_action` with the action class
  (MCP `list_tools` / `call_tool` actions are recognised for the base `Action` and the MCP
  action classes, as there), answered with `serialize_observation`; `state` is the state model's
  dump. So a bridged environment answers every OpenEnv client field for field as under
  OpenEnv's own server.
- The action class: the `action` option (`MODULE:ATTR`), else the app's, else the class's
  `Environment[Act, ...]` parameter, else the annotation of `step`'s action parameter, else
  OpenEnv's base `Action` (as for an `openenv import` wrapper, which handles MCP actions itself).
- Tools, for mcpgym's spec MCP face: an `MCPEnvironment`, or any environment whose action class
  admits MCP actions and whose `step(ListToolsAction())` answers with tools, publishes them at each
  reset; `call` runs `step(CallToolAction)` and returns the tool's value (FastMCP's `data`, else
  its structured content, else its text) with the step's reward and end.

What does not map (an `unsupported` error says so): OpenEnv's code mode (`execute_code`), and
concurrent sessions on one instance (each mcpgym session has its own worker).
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


def library_version() -> dict[str, str]:
    """Which OpenEnv distribution this is: `openenv` (0.10) or `openenv-core`."""
    for dist in ("openenv", "openenv-core"):
        try:
            return {"name": dist, "version": importlib.metadata.version(dist)}
        except importlib.metadata.PackageNotFoundError:
            continue
    return {"name": "openenv", "version": "unknown"}


class Backend:
    """The worker's view of one OpenEnv environment instance."""

    def __init__(self, target: str, options: dict[str, Any]) -> None:
        from openenv.core.env_server import serialization
        from openenv.core.env_server.interfaces import Environment
        from openenv.core.env_server.types import Action

        self.library = library_version()
        self.serialization = serialization
        made, app_args = _load_target(target)
        factory = app_args.get("env", made) if app_args else made
        env = factory() if callable(factory) and not isinstance(factory, Environment) else factory
        if not isinstance(env, Environment):
            raise TypeError(
                f"{target} is not an OpenEnv Environment, a factory of one or an OpenEnv app "
                f"(got {type(env).__name__})"
            )
        self.env = env
        spec = options.get("action")
        self.action_cls: Any = (
            wire.load_attr(spec)
            if spec
            else (app_args or {}).get("action_cls") or _action_class(type(env)) or Action
        )
        self.started = False
        self.speaks_mcp = self._admits_mcp()

    # -- the episode -----------------------------------------------------------------------------

    async def reset(self, seed: Any, episode_id: Any, options: dict[str, Any]) -> dict[str, Any]:
        sent = dict(options)
        if seed is not None:
            sent["seed"] = seed
        if episode_id is not None:
            sent["episode_id"] = episode_id
        obs = await self._call("reset", sent)
        self.started = True
        tools = await self._tools() if self.speaks_mcp else []
        return {
            "tools": tools,
            "observation": self._payload(obs),
            "state": self.state(),
        }

    async def step(self, action: Any, timeout_s: Any = None) -> dict[str, Any]:
        """One raw OpenEnv action, as OpenEnv's server reads and answers it."""
        from pydantic import ValidationError

        if not isinstance(action, dict):
            raise wire.BridgeFailure("invalid_args", "an action must be a JSON object")
        try:
            parsed = self.serialization.deserialize_action(action, self.action_cls)
        except ValidationError as exc:
            errors = [
                {"field": ".".join(map(str, e["loc"])) or "(root)", "message": e["msg"]}
                for e in exc.errors(include_url=False)
            ]
            raise wire.BridgeFailure(
                "invalid_args",
                f"invalid action: {errors[0]['field']}: {errors[0]['message']}",
                errors=errors,
            ) from None
        extra = {"timeout_s": timeout_s} if timeout_s is not None else {}
        obs = await self._call("step", extra, parsed)
        return {"observation": self._payload(obs), "state": self.state()}

    def state(self) -> dict[str, Any]:
        state = self.env.state
        if hasattr(state, "model_dump"):
            return wire.jsonable(state.model_dump())
        return wire.jsonable(dict(state) if state else {})

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if not self.started:
            raise wire.BridgeFailure("no_episode", "reset first")
        if not self.speaks_mcp:
            raise wire.BridgeFailure("unknown_tool", f"Unknown tool: {name!r}")
        from openenv.core.env_server.mcp_types import CallToolAction

        obs = await self._call("step", {}, CallToolAction(tool_name=name, arguments=arguments))
        error = getattr(obs, "error", None)
        if error is not None:
            kind = getattr(error.error_type, "value", str(error.error_type))
            raise wire.BridgeFailure(_KINDS.get(kind, "tool"), error.message, openenv=kind)
        return {
            "output": _output(getattr(obs, "result", None)),
            "reward": obs.reward,
            "done": bool(obs.done),
            "state": self.state(),
        }

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if callable(close):
            close()

    # -- internals ----------------------------------------------------------------------------

    def _payload(self, obs: Any) -> dict[str, Any]:
        return wire.jsonable(self.serialization.serialize_observation(obs))

    def _admits_mcp(self) -> bool:
        """An `MCPEnvironment`; or a plain environment whose action class is one of OpenEnv's
        MCP actions, or whose `step` handles `ListToolsAction` (the `openenv import` wrapper)."""
        from openenv.core.env_server.mcp_environment import MCPEnvironment
        from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction

        if isinstance(self.env, MCPEnvironment):
            return True
        if self.action_cls in (CallToolAction, ListToolsAction):
            return True
        code = getattr(getattr(type(self.env), "step", None), "__code__", None)
        return code is not None and "ListToolsAction" in code.co_names

    async def _tools(self) -> list[dict[str, Any]]:
        """The tools, listed without a step of the class's own where it can be (an
        `MCPEnvironment` subclass that counts steps would count this one)."""
        from openenv.core.env_server.mcp_types import ListToolsAction

        try:
            handler = getattr(self.env, "_async_handle_list_tools", None)
            if handler is not None:
                listed = await handler()
            else:
                listed = await self._call("step", {}, ListToolsAction())
        except Exception:  # a plain environment that does not speak MCP after all
            self.speaks_mcp = False
            return []
        tools = getattr(listed, "tools", None)
        if not isinstance(tools, list):
            self.speaks_mcp = False
            return []
        return [
            {
                "name": t.name,
                "description": t.description or "",
                "input_schema": wire.jsonable(t.input_schema) or {"type": "object"},
            }
            for t in tools
        ]

    async def _call(self, name: str, kwargs: dict[str, Any], *args: Any) -> Any:
        """`reset` / `step` as OpenEnv's server calls them: the `*_async` method when the class
        overrides the base one, else the sync one in a thread; keyword arguments the method's
        signature does not take are dropped."""
        from openenv.core.env_server.interfaces import Environment

        method = getattr(self.env, f"{name}_async", None)
        base = getattr(Environment, f"{name}_async", None)
        is_async = method is not None and getattr(method, "__func__", None) is not base
        chosen: Any = method if is_async else getattr(self.env, name)
        kwargs = _accepted(chosen, kwargs)
        if is_async:
            return await chosen(*args, **kwargs)
        return await asyncio.to_thread(lambda: chosen(*args, **kwargs))


def _accepted(method: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments `method` accepts (all of them when it takes `**kwargs`)."""
    if not kwargs:
        return kwargs
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


# target → the app arguments found when it was first imported (a module runs once per process:
# served in process, later sessions import it from sys.modules and build no server again)
_APP_ARGS: dict[str, dict[str, Any] | None] = {}


def _load_target(target: str) -> tuple[Any, dict[str, Any] | None]:
    """The target, and — when it is (or its module built) an OpenEnv app — the arguments that
    app's server was made with: its environment factory and action class."""
    if target in _APP_ARGS:
        return wire.load_attr(target), _APP_ARGS[target]
    made, args = _import_recording(target)
    _APP_ARGS[target] = args
    return made, args


def _import_recording(target: str) -> tuple[Any, dict[str, Any] | None]:
    from openenv.core.env_server import http_server

    seen: list[dict[str, Any]] = []
    original = http_server.HTTPEnvServer.__init__
    params = list(inspect.signature(original).parameters)[1:]

    def recording(self: Any, *args: Any, **kwargs: Any) -> None:
        seen.append({**dict(zip(params, args, strict=False)), **kwargs})
        original(self, *args, **kwargs)

    http_server.HTTPEnvServer.__init__ = recording
    try:
        made = wire.load_attr(target)
    finally:
        http_server.HTTPEnvServer.__init__ = original
    if not seen:
        return made, None
    if _is_app(made):
        return made, seen[-1]
    for args in seen:  # the class the app serves: take that app's action class too
        if args.get("env") is made:
            return made, args
    return made, None


def _is_app(obj: Any) -> bool:
    return type(obj).__name__ in ("FastAPI", "Starlette") and hasattr(obj, "routes")


def _output(result: Any) -> Any:
    """A FastMCP `CallToolResult` as JSON: its data, else structured content, else text."""
    if result is None:
        return None
    if isinstance(result, dict):
        for key in ("data", "structured_content"):
            if result.get(key) is not None:
                return wire.jsonable(result[key])
        content = result.get("content")
    else:
        data = getattr(result, "data", None)
        if data is not None:
            return wire.jsonable(data)
        structured = getattr(result, "structured_content", None)
        if structured is not None:
            return wire.jsonable(structured)
        content = getattr(result, "content", None)
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "") if isinstance(b, dict) else getattr(b, "text", ""))
            for b in content
        )
    return wire.jsonable(result)


def _action_class(cls: type) -> Any:
    """The `Act` of `class X(Environment[Act, Obs, State])`, else the annotation of the action
    parameter of `step` (the `openenv init` scaffold's `def step(self, action: MyAction)`)."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            args = typing.get_args(base)
            if args and _is_model(args[0]):
                return args[0]
    step = getattr(cls, "step", None)
    if step is None:
        return None
    try:
        hints = typing.get_type_hints(step)
    except Exception:  # unresolvable forward references: no annotation to go by
        hints = getattr(step, "__annotations__", {})
    params = [p for p in inspect.signature(step).parameters if p != "self"]
    hint = hints.get(params[0]) if params else None
    return hint if _is_model(hint) else None


def _is_model(obj: Any) -> bool:
    return inspect.isclass(obj) and hasattr(obj, "model_json_schema")
