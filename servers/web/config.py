"""`/web/config.json`: the name, mode, versions, transport paths, limits, schemas and tasks the
page needs, computed once per app from what the server learnt at start-up.

In production the tool list is left out: the page asks `/mcp` for it, behind the same bearer
token as every call, so the config never tells an unauthenticated visitor more than `/health`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from starlette.applications import Starlette

from mcpgym.mcp_env import MCPEnvironment
from mcpgym.servers.factory import load_target
from mcpgym.servers.settings import ServerSettings
from mcpgym.types import mcp_action_adapter

__all__ = ["MAX_TASKS", "load_tasks", "web_config"]

MAX_TASKS = 500
"""At most this many tasks are offered (the page lists them in one select)."""


def _mcpgym_version() -> str:
    try:
        return version("mcpgym")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


def _field(item: Any, name: str, default: Any) -> Any:
    if isinstance(item, Mapping):
        return item.get(name, default)  # type: ignore[union-attr]
    return getattr(item, name, default)


def load_tasks(target: str | None) -> list[dict[str, Any]]:
    """The episode specs named by `target` (`MODULE:ATTR`) as JSON: id, prompt, reset, tags.

    `target` names a sequence of specs or a callable returning one; a spec is an object or a
    dict with `id`, `reset` (reset options) and `prompt` (the `EpisodeSpec` of the harness fits).
    Raises `ValueError` when they cannot be loaded, so a bad flag stops the server at start-up.
    """
    if not target:
        return []
    found: Any = load_target(target)
    try:
        produced: Any = found() if callable(found) else found
        items: list[Any] = list(produced)
    except Exception as exc:
        raise ValueError(f"--web-tasks {target}: {type(exc).__name__}: {exc}") from exc
    tasks: list[dict[str, Any]] = []
    for item in items[:MAX_TASKS]:
        task = {
            "id": str(_field(item, "id", "")),
            "prompt": str(_field(item, "prompt", "")),
            "reset": dict(_field(item, "reset", {}) or {}),
            "tags": {str(k): str(v) for k, v in dict(_field(item, "tags", {}) or {}).items()},
        }
        try:
            json.dumps(task)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"--web-tasks {target}: task {task['id']!r}: {exc}") from exc
        tasks.append(task)
    return tasks


def _tools(env_cls: type | None, settings: ServerSettings) -> list[dict[str, Any]]:
    specs: Mapping[str, Any] = getattr(env_cls, "tool_specs", {}) or {}
    return [
        {
            "name": spec.name,
            "description": spec.description,
            "input_schema": spec.input_schema,
            "annotations": dict(spec.annotations or {}),
        }
        for spec in specs.values()
        if spec.visible_in(settings.mode)
    ]


def _build(app: Starlette) -> dict[str, Any]:
    settings: ServerSettings = app.state.settings
    info = app.state.env_info
    env_cls = info.env_cls
    is_mcp = env_cls is not None and issubclass(env_cls, MCPEnvironment)
    simulation = settings.mode == "simulation"
    config: dict[str, Any] = {
        "name": info.metadata.name,
        "description": info.metadata.description,
        "version": info.metadata.version,
        "mcpgym_version": _mcpgym_version(),
        "mode": settings.mode,
        "transport": "ws" if simulation else "mcp",
        "paths": {"ws": "/ws" if simulation else None, "mcp": "/mcp"},
        "auth": "bearer" if (settings.token or settings.principals) else None,
        "limits": {
            "max_sessions": settings.max_sessions,
            "max_frame_bytes": settings.max_frame_bytes,
            "idle_timeout_s": settings.idle_timeout_s,
            "step_timeout_s": settings.step_timeout_s,
        },
        "tools_env": is_mcp,
        "tools": _tools(env_cls, settings) if simulation else [],
        "schemas": {},
    }
    if simulation:
        action = (
            mcp_action_adapter.json_schema() if is_mcp else info.action_type.model_json_schema()
        )
        config["schemas"] = {
            "action": action,
            "observation": info.observation_type.model_json_schema(),
            "state": info.state_type.model_json_schema(),
        }
    return config


def web_config(app: Starlette, root: str, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """The page's config for a request under the proxy prefix `root` (built once per app)."""
    cached: dict[str, Any] | None = getattr(app.state, "web_config", None)
    if cached is None:
        cached = _build(app)
        app.state.web_config = cached
    paths = {k: (root + v if v else None) for k, v in cached["paths"].items()}
    return {**cached, "paths": paths, "root": root, "tasks": tasks}
