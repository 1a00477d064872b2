"""Tools published at run time: specs from data (JSON Schema), calls dispatched by name.

`@tool` methods are fixed when the class is defined. An adapter for another environment library
learns its tools only when it has loaded (or connected to) the foreign environment, so it
publishes `DynamicTool` specs instead and answers every call in one `dispatch_tool` method.
Dynamic tools go through the same path as `@tool` tools (`MCPEnvironment.call_tool`): arguments
are checked against the input schema (`InvalidToolArguments` with the same
`{"field", "message", "type"}` items), mode tags hide a tool from the other server mode
(`ToolNotFound` with near names), a failure in the handler is a `ToolExecutionError`, a timeout a
`ToolTimeout`, and calls of one instance never overlap.

Example:
    >>> import asyncio
    >>> from mcpgym.dynamic_tools import DynamicTool, DynamicToolsEnvironment
    >>> class Calc(DynamicToolsEnvironment):
    ...     def reset(self, seed=None, episode_id=None, **kw):
    ...         obs = super().reset(seed=seed, episode_id=episode_id, **kw)
    ...         schema = {"type": "object", "properties": {"a": {"type": "integer"}},
    ...                   "required": ["a"]}
    ...         self.publish_tools([DynamicTool("double", schema, description="2a")])
    ...         return obs
    ...     async def dispatch_tool(self, name, arguments):
    ...         return {"value": 2 * arguments["a"]}
    >>> env = Calc()
    >>> _ = env.reset()
    >>> asyncio.run(env.call_tool("double", {"a": 21}))
    {'value': 42}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from mcpgym._hints import jsonable
from mcpgym.content import ContentBlocks, as_blocks
from mcpgym.errors import (
    EnvironmentDefinitionError,
    InvalidToolArguments,
    ToolError,
    ToolExecutionError,
)
from mcpgym.mcp_env import MCPEnvironment
from mcpgym.tools import RESERVED_NAMES, Mode, ToolSpec
from mcpgym.types import ToolInfo

__all__ = ["DynamicTool", "DynamicToolsEnvironment"]

_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class DynamicTool:
    """One tool described by data: name, JSON Schemas, mode tag and MCP annotations.

    It quacks like a `ToolSpec` (the servers list and call it the same way); calls go to the
    environment's `dispatch_tool(name, arguments)`.

    Args:
        name: the public tool name (1-128 of `A-Z a-z 0-9 _ - .`; not reset/step/state/close).
        input_schema: a JSON Schema (draft 2020-12) of `"type": "object"` for the arguments.
        description: shown to agents.
        output_schema: an optional object schema; a result that does not match it is a
            `ToolExecutionError` (the environment broke its own promise).
        mode: `"simulation"` or `"production"` to show the tool in that mode only; `None` both.
        annotations: MCP tool annotations, passed through.

    Raises:
        EnvironmentDefinitionError: a bad name, mode, or schema.
    """

    method = "dispatch_tool"
    is_async = True
    context_param: str | None = None
    returns_content = False

    def __init__(
        self,
        name: str,
        input_schema: Mapping[str, Any] | None = None,
        *,
        description: str = "",
        output_schema: Mapping[str, Any] | None = None,
        mode: Mode | None = None,
        annotations: Mapping[str, Any] | None = None,
    ) -> None:
        raw_name: Any = name  # data from a foreign library: checked, not trusted
        if not isinstance(raw_name, str) or not _NAME_RE.match(raw_name):
            raise EnvironmentDefinitionError(
                f"dynamic tool name {name!r} must be 1-128 of A-Z a-z 0-9 _ - ."
            )
        if name in RESERVED_NAMES:
            raise EnvironmentDefinitionError(
                f"dynamic tool {name!r} is reserved for the episode contract "
                f"({', '.join(sorted(RESERVED_NAMES))})"
            )
        if mode not in (None, "simulation", "production"):
            raise EnvironmentDefinitionError(
                f"tool mode must be 'simulation', 'production' or None, not {mode!r}"
            )
        self.name = name
        self.description = description
        self.mode: Mode | None = mode
        self.annotations = dict(annotations) if annotations else None
        self.input_schema = _object_schema(name, "input", input_schema or {"type": "object"})
        self.output_schema = (
            _object_schema(name, "output", output_schema) if output_schema is not None else None
        )
        self._validator = Draft202012Validator(self.input_schema)
        self._out = Draft202012Validator(self.output_schema) if self.output_schema else None
        self.info = ToolInfo(
            name=name,
            description=description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
        )

    def visible_in(self, mode: Mode) -> bool:
        """Whether the tool exists in a server running in `mode`."""
        return self.mode is None or self.mode == mode

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check `arguments` against the input schema; the keyword arguments of `dispatch_tool`.

        Raises `InvalidToolArguments` listing every problem (`field`, `message`, `type`, `got`).
        """
        args = dict(arguments or {})
        errors = [item for e in self._validator.iter_errors(args) for item in _items(e)]
        if errors:
            errors.sort(key=lambda item: item["field"])
            fields = ", ".join(e["field"] for e in errors)
            raise InvalidToolArguments(
                f"Invalid arguments for tool {self.name!r} ({fields}): {errors[0]['message']}",
                tool=self.name,
                errors=errors,
                input_schema=self.input_schema,
            )
        return {"name": self.name, "arguments": args}

    def dump_result(self, value: Any) -> Any:
        """The JSON-able result (content values become `ContentBlocks`), checked against the
        output schema when there is one."""
        blocks = as_blocks(value)
        if blocks is not None:
            return blocks
        dumped = value.model_dump(mode="json") if hasattr(value, "model_dump") else jsonable(value)
        if self._out is not None and not self._out.is_valid(dumped):
            first = next(iter(self._out.iter_errors(dumped)))
            raise ToolExecutionError(
                f"tool {self.name!r} returned a result outside its output schema: {first.message}",
                tool=self.name,
            )
        return dumped

    def structured(self, dumped: Any) -> dict[str, Any] | None:
        """The MCP `structuredContent` of a dumped result (an object result, or none)."""
        if isinstance(dumped, ContentBlocks):
            return None
        return dumped if isinstance(dumped, dict) else None

    def __repr__(self) -> str:
        return f"DynamicTool({self.name!r}, mode={self.mode!r})"


def _items(err: ValidationError) -> list[dict[str, Any]]:
    """One `{"field", "message", "type"[, "got"]}` item per offending field, as `@tool` reports
    them: a missing or an unexpected property is named itself, not its parent object."""
    where = [str(p) for p in err.absolute_path]
    instance: Any = err.instance
    names: list[str] = []
    if err.validator == "required" and isinstance(instance, dict):
        required: Any = err.validator_value
        names = [str(n) for n in required if n not in instance]
    elif err.validator == "additionalProperties" and isinstance(instance, dict):
        known = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
        names = [n for n in instance if n not in known]
    if names:
        kind = "missing" if err.validator == "required" else "extra_forbidden"
        text = "Field required" if kind == "missing" else "Extra inputs are not permitted"
        return [
            {"field": ".".join([*where, n]), "message": text, "type": kind}
            | ({} if kind == "missing" else {"got": jsonable(instance[n])})
            for n in names
        ]
    return [
        {
            "field": ".".join(where) or "(root)",
            "message": err.message,
            "type": str(err.validator),
            "got": jsonable(instance),
        }
    ]


def _object_schema(tool: str, which: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    raw: Any = schema
    if not isinstance(raw, Mapping):
        raise EnvironmentDefinitionError(f"tool {tool!r}: the {which} schema must be an object")
    out: dict[str, Any] = dict(raw)
    try:
        Draft202012Validator.check_schema(out)
    except SchemaError as exc:
        raise EnvironmentDefinitionError(
            f"tool {tool!r}: invalid {which} schema: {exc.message}"
        ) from None
    if out.get("type") != "object":
        raise EnvironmentDefinitionError(
            f'tool {tool!r}: the {which} schema must have "type": "object" (MCP requires it)'
        )
    return out


class DynamicToolsEnvironment(MCPEnvironment):
    """An `MCPEnvironment` whose tools (besides any `@tool` methods) are published at run time.

    Call `publish_tools` (in `reset`, or whenever the foreign environment's tool list changes)
    and implement `dispatch_tool`. Published tools replace the previous set; names must not
    collide with the class's `@tool` tools.
    """

    _dynamic: dict[str, DynamicTool] | None = None

    def publish_tools(self, tools: Iterable[DynamicTool]) -> None:
        """Replace this instance's dynamic tools.

        Raises:
            EnvironmentDefinitionError: a duplicate name, or one that a `@tool` method owns.
        """
        table: dict[str, DynamicTool] = {}
        for spec in tools:
            if not isinstance(spec, DynamicTool):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise EnvironmentDefinitionError(f"not a DynamicTool: {spec!r}")
            if spec.name in table or spec.name in self.tool_specs:
                raise EnvironmentDefinitionError(f"tool {spec.name!r} is defined twice")
            table[spec.name] = spec
        self._dynamic = table

    @property
    def dynamic_tools(self) -> dict[str, DynamicTool]:
        """The published tools, by name (all modes)."""
        return dict(self._dynamic or {})

    def visible_tools(self) -> list[ToolSpec]:
        mode = self.serving_mode
        extra = [s for s in (self._dynamic or {}).values() if s.visible_in(mode)]
        return [*super().visible_tools(), *extra]  # type: ignore[list-item]

    def get_tool(self, name: str) -> ToolSpec:
        spec = (self._dynamic or {}).get(name)
        if spec is not None and spec.visible_in(self.serving_mode):
            return spec  # type: ignore[return-value]  # a ToolSpec by shape
        return super().get_tool(name)

    async def dispatch_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run the published tool `name` with validated `arguments` (override).

        Return a JSON-able value or content; raise `ToolError` for a failure the agent should
        see as it is (any other exception becomes a `ToolExecutionError`).
        """
        raise ToolError(f"{type(self).__name__} publishes {name!r} but dispatches no calls")
