"""The `@tool` decorator and `ToolSpec`, the per-tool metadata an environment class collects.

`@tool` only attaches a `ToolMeta` to the function, so it works on methods; `MCPEnvironment`
collects tagged methods once, when the class is defined, and turns each into a `ToolSpec`: a
pydantic argument model and JSON Schema built from the full type hints, an output schema from the
return annotation, and a description from the docstring. Nothing is reflected per request.

Example:
    >>> from typing import Annotated
    >>> from pydantic import Field
    >>> from mcpgym import MCPEnvironment, tool
    >>> class Adder(MCPEnvironment):
    ...     @tool
    ...     def add(self, a: int, b: Annotated[int, Field(description="second")] = 1) -> int:
    ...         '''Add two integers.'''
    ...         return a + b
    >>> Adder.tool_specs["add"].input_schema["required"]
    ['a']
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from mcpgym._hints import (
    MAX_ECHO_CHARS,
    WRAP_KEY,
    args_model,
    clip,
    context_param,
    output_adapter,
    parse_docstring,
    strict_jsonable,
    validation_errors,
)
from mcpgym.content import ContentBlocks, as_blocks, is_content_annotation
from mcpgym.context import current_context
from mcpgym.errors import EnvironmentDefinitionError, InvalidToolArguments
from mcpgym.types import ToolInfo

__all__ = [
    "RESERVED_NAMES",
    "WRAP_KEY",
    "Mode",
    "ToolMeta",
    "ToolSpec",
    "tool",
    "validation_errors",
]

Mode = Literal["simulation", "production"]
RESERVED_NAMES = frozenset({"reset", "step", "state", "close"})
"""Marks an output schema whose structured result is `{"result": value}` around a non-object."""
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class ToolMeta:
    """What `@tool` attaches to a function (as `fn.__mcpgym_tool__`)."""

    name: str | None = None
    description: str | None = None
    mode: Mode | None = None
    annotations: Mapping[str, Any] | None = None


@overload
def tool(fn: _F, /) -> _F: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    mode: Mode | None = None,
    annotations: Mapping[str, Any] | None = None,
) -> Callable[[_F], _F]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    mode: Mode | None = None,
    annotations: Mapping[str, Any] | None = None,
) -> Any:
    """Mark a method of an `MCPEnvironment` as a tool.

    Args:
        name: the tool's name (default: the method name).
        description: shown to agents (default: the docstring's summary).
        mode: `"simulation"` or `"production"` to show the tool in that server mode only;
            `None` (untagged) shows it in both.
        annotations: MCP tool annotations, passed through (e.g. `{"readOnlyHint": True}`).

    Example:
        >>> class Env(MCPEnvironment):
        ...     @tool(mode="simulation")
        ...     def peek(self) -> str:
        ...         '''Only trainers see this.'''
        ...         return "secret"
    """
    if mode not in (None, "simulation", "production"):
        raise EnvironmentDefinitionError(
            f"tool mode must be 'simulation', 'production' or None, not {mode!r}"
        )
    meta = ToolMeta(name=name, description=description, mode=mode, annotations=annotations)

    def mark(f: _F) -> _F:
        f.__mcpgym_tool__ = meta  # type: ignore[attr-defined]
        return f

    return mark(fn) if fn is not None else mark


class ToolSpec:
    """One tool of an environment class, built once at class definition.

    Attributes:
        name: the public tool name.
        method: the name of the method on the environment class.
        mode: `None` (both modes), `"simulation"` or `"production"`.
        input_schema / output_schema: JSON Schemas (output `None` when unannotated).
        is_async: whether the method is a coroutine function.
        context_param: the parameter that receives the `ToolContext`, if the tool declares one
            (it is not in the input schema; `validate` injects the current context).
        returns_content: the return annotation names content values (`mcpgym.content`).
        untyped_args: arguments without a type hint (the agent is told any JSON will do).
        where: `file.py:LINE (Class.method)` of the definition, for one-line messages.
    """

    __slots__ = (
        "_args_model",
        "_param_names",
        "_return_adapter",
        "_to_python",
        "_validate_args",
        "_wrap_output",
        "annotations",
        "context_param",
        "description",
        "info",
        "input_schema",
        "is_async",
        "method",
        "mode",
        "name",
        "output_schema",
        "returns_content",
        "untyped_args",
        "where",
    )

    def __init__(self, owner: type, attr: str, fn: Callable[..., Any], meta: ToolMeta) -> None:
        self.method = attr
        self.name = meta.name if meta.name is not None else attr
        where = f"{owner.__qualname__}.{attr}"
        if self.name in RESERVED_NAMES or attr in RESERVED_NAMES:
            raise EnvironmentDefinitionError(
                f"{where}: {self.name!r} is reserved for the episode contract "
                f"({', '.join(sorted(RESERVED_NAMES))}); fix: rename the method, or pass "
                "@tool(name=...)"
            )
        if not _NAME_RE.match(self.name):
            raise EnvironmentDefinitionError(
                f"{where}: tool name {self.name!r} must be 1-128 of A-Z a-z 0-9 _ - ."
            )
        self.mode = meta.mode
        self.annotations = dict(meta.annotations) if meta.annotations else None
        self.is_async = inspect.iscoroutinefunction(fn)
        summary, param_docs = parse_docstring(fn.__doc__)
        self.description = meta.description if meta.description is not None else summary
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise EnvironmentDefinitionError(f"{where}: cannot resolve type hints: {exc}") from exc
        self.context_param = context_param(where, fn, hints)
        if self.context_param is not None and not self.is_async:
            raise EnvironmentDefinitionError(
                f"{where}: a tool that takes a ToolContext must be `async def` "
                "(logging, progress, sampling and elicitation are I/O)."
            )
        self._args_model, self._param_names = args_model(
            where, fn, hints, param_docs, skip=self.context_param
        )
        self.untyped_args = tuple(p for p in self._param_names if p not in hints)
        self.where = _source_line(fn, where)
        try:
            self.input_schema = self._args_model.model_json_schema()
        except Exception as exc:
            raise EnvironmentDefinitionError(
                f"{where}: no JSON Schema for its arguments: {exc}"
            ) from exc
        self.input_schema.pop("title", None)
        # The model is complete now (its schema was built): bind its core validator, which is
        # what `model_validate` calls after its own argument checks.
        self._validate_args: Callable[[Any], Any] = (
            self._args_model.__pydantic_validator__.validate_python
        )
        returns = hints.get("return", inspect.Signature.empty)
        self.returns_content = is_content_annotation(returns)
        self._return_adapter, self.output_schema, self._wrap_output = (
            (None, None, False) if self.returns_content else output_adapter(where, returns)
        )
        # How a return value is dumped, decided once: a typed (non-content) return goes straight
        # to its adapter's serializer (what `TypeAdapter.dump_python` calls); without one the
        # value may be content at run time (`_dump_untyped`).
        self._to_python: Callable[..., Any] | None = (
            self._return_adapter.serializer.to_python if self._return_adapter is not None else None
        )
        self.info = ToolInfo(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            annotations=self.annotations,
        )

    def visible_in(self, mode: Mode) -> bool:
        """Whether the tool exists in a server running in `mode`."""
        return self.mode is None or self.mode == mode

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate JSON arguments and return the keyword arguments for the method.

        The context parameter, if any, is set to the current `ToolContext`.
        Raises `InvalidToolArguments` with every problem listed in `errors`.
        """
        try:
            parsed = self._validate_args(arguments or {})
        except PydanticValidationError as exc:
            errors = validation_errors(exc)
            fields = clip(", ".join(e["field"] for e in errors), MAX_ECHO_CHARS)
            more = exc.error_count() - len(errors)
            raise InvalidToolArguments(
                f"Invalid arguments for tool {self.name!r} ({fields}): {errors[0]['message']}",
                tool=self.name,
                errors=errors,
                input_schema=self.input_schema,
                **({"more_errors": more} if more > 0 else {}),
            ) from None
        # The fields, in parameter order; `extra="forbid"` keeps anything else out. The dict is
        # the discarded model's own, so it is handed over without a copy.
        kwargs: dict[str, Any] = parsed.__dict__
        if self.context_param is not None:
            kwargs[self.context_param] = current_context()
        return kwargs

    def dump_result(self, value: Any) -> Any:
        """The JSON-able form of a return value (what `CallToolObservation.result` carries).

        Content values (`mcpgym.content`) become `ContentBlocks`, the MCP content blocks.
        """
        to_python = self._to_python
        if to_python is not None:
            return to_python(value, mode="json")
        return _dump_untyped(value)

    def structured(self, dumped: Any) -> dict[str, Any] | None:
        """The MCP `structuredContent` for a dumped result (`None` without an output schema)."""
        if isinstance(dumped, ContentBlocks):
            return None
        if self.output_schema is None:
            return dumped if isinstance(dumped, dict) else None
        return {"result": dumped} if self._wrap_output else dumped

    def __repr__(self) -> str:
        return f"ToolSpec({self.name!r}, mode={self.mode!r}, async={self.is_async})"


def _dump_untyped(value: Any) -> Any:
    """`ToolSpec.dump_result` of a tool without a typed (non-content) return annotation."""
    blocks = as_blocks(value)
    if blocks is not None:
        return blocks
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return strict_jsonable(value)  # raises for what JSON cannot carry (never a repr)


def _source_line(fn: Callable[..., Any], where: str) -> str:
    """`file.py:LINE (Class.method)` of a tool's definition, for one-line messages."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return where
    return f"{Path(code.co_filename).name}:{code.co_firstlineno} ({where})"


def collect_tools(cls: type) -> dict[str, ToolSpec]:
    """Build the `ToolSpec`s of every `@tool` method on `cls` and its bases (subclass wins)."""
    specs: dict[str, ToolSpec] = {}
    seen_attrs: set[str] = set()
    for klass in cls.__mro__:
        for attr, value in vars(klass).items():
            if attr in seen_attrs:
                continue
            seen_attrs.add(attr)
            fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            meta = getattr(fn, "__mcpgym_tool__", None)
            if not isinstance(meta, ToolMeta):
                continue
            spec = ToolSpec(cls, attr, fn, meta)
            if spec.name in specs:
                raise EnvironmentDefinitionError(
                    f"{cls.__qualname__}: two methods define tool {spec.name!r}"
                    f" ({specs[spec.name].method} and {attr})"
                )
            specs[spec.name] = spec
    return specs
