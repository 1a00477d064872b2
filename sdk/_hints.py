"""From Python signatures to what agents read: docstring texts, hint inspection, and
validation errors flattened for agents. The pieces `ToolSpec` is built from."""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model
from pydantic import ValidationError as PydanticValidationError
from pydantic.fields import FieldInfo

from mcpgym.context import ToolContext
from mcpgym.errors import EnvironmentDefinitionError
from mcpgym.runtime.json_size import size_at_least

__all__ = [
    "MAX_ECHO_CHARS",
    "MAX_REPORTED_ERRORS",
    "clip",
    "exception_text",
    "jsonable",
    "parse_docstring",
    "strict_jsonable",
    "validation_errors",
]

MAX_ECHO_CHARS = 200
"""The most of a client's own value an error echoes back (`got`); longer ones are described."""
MAX_REPORTED_ERRORS = 20
"""The most validation errors one error lists (the rest are counted in `more_errors`)."""
_MAX_MESSAGE_CHARS = 1000
WRAP_KEY = "x-mcpgym-wrap-result"
"""Marks an output schema that wraps a non-object return as `{"result": value}`."""


def clip(text: str, limit: int = _MAX_MESSAGE_CHARS) -> str:
    """`text`, cut to `limit` characters with a note of how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def exception_text(exc: BaseException) -> str:
    """`"Type: message"` for an error reply, the message clipped (it may quote arguments)."""
    return f"{type(exc).__name__}: {clip(str(exc))}"


def _echo(value: Any) -> Any:
    """A client's value as an error may quote it: itself when short and JSON, else a summary."""
    if isinstance(value, str):
        return clip(value, MAX_ECHO_CHARS)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    size = size_at_least(value, MAX_ECHO_CHARS)
    if size > MAX_ECHO_CHARS:
        return f"{type(value).__name__} of at least {size} bytes of JSON (not echoed)"
    return jsonable(value)


def validation_errors(exc: PydanticValidationError) -> list[dict[str, Any]]:
    """Flatten pydantic errors into `{"field", "message", "type", "got"}` items for agents."""
    out: list[dict[str, Any]] = []
    for err in exc.errors(include_url=False)[:MAX_REPORTED_ERRORS]:
        item: dict[str, Any] = {
            "field": clip(".".join(str(p) for p in err["loc"]), MAX_ECHO_CHARS) or "(root)",
            "message": clip(err["msg"]),
            "type": err["type"],
        }
        if "input" in err and err["type"] != "missing":
            item["got"] = _echo(err["input"])
        out.append(item)
    return out


def jsonable(value: Any) -> Any:
    try:
        return _any_to_python(value, mode="json")
    except Exception:
        return repr(value)


def strict_jsonable(value: Any) -> Any:
    """`value` as JSON data; raises for values JSON cannot carry (`object()`, invalid bytes)."""
    return _any_to_python(value, mode="json")


# `TypeAdapter(Any)` costs tens of µs to build: build it once, and call its serializer directly.
_any_to_python: Callable[..., Any] = TypeAdapter(Any).serializer.to_python


_ARGS_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s+(\*{0,2}\w+)\s*(\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument texts."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    params: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in lines:
        if _ARGS_SECTION.match(line):
            in_args = True
            continue
        if in_args:
            if line and not line[0].isspace():  # next section
                in_args = False
                current = None
                if re.match(r"^\w+:\s*$", line):
                    break
            else:
                m = _ARG_LINE.match(line)
                if m and (line.startswith("    ") and not line.startswith("        ")):
                    current = name = str(m.group(1))
                    params[name] = m.group(3).strip()
                elif current and line.strip():
                    params[current] += " " + line.strip()
                continue
        if re.match(r"^(Returns|Raises|Example|Examples|Yields|Note):\s*$", line):
            break
        desc.append(line)
    return "\n".join(desc).strip(), params


def is_object_schema(adapter_schema: dict[str, Any]) -> bool:
    return adapter_schema.get("type") == "object"


def context_param(where: str, fn: Callable[..., Any], hints: dict[str, Any]) -> str | None:
    """The one parameter annotated `ToolContext` (or `ToolContext | None`), if any."""
    found = [name for name, hint in hints.items() if name != "return" and _is_context(hint)]
    if len(found) > 1:
        raise EnvironmentDefinitionError(f"{where}: only one parameter may take the ToolContext")
    return found[0] if found else None


def _is_context(hint: Any) -> bool:
    if isinstance(hint, type):
        return issubclass(hint, ToolContext)
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    is_union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    return is_union and len(args) == 1 and _is_context(args[0])


def has_description(annotation: Any) -> bool:
    if typing.get_origin(annotation) is typing.Annotated:
        return any(
            isinstance(m, FieldInfo) and m.description for m in typing.get_args(annotation)[1:]
        )
    return False


def args_model(
    where: str,
    fn: Callable[..., Any],
    hints: dict[str, Any],
    param_docs: dict[str, str],
    skip: str | None = None,
) -> tuple[type[BaseModel], tuple[str, ...]]:
    """The pydantic model of a tool's arguments (`extra="forbid"`) and their names, in order."""
    sig = inspect.signature(fn)
    fields: dict[str, Any] = {}
    names: list[str] = []
    for i, (pname, param) in enumerate(sig.parameters.items()):
        if (i == 0 and pname in ("self", "cls")) or pname == skip:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise EnvironmentDefinitionError(
                f"{where}: *args/**kwargs cannot be described to an agent; name each argument."
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise EnvironmentDefinitionError(f"{where}: positional-only argument {pname!r}")
        annotation = hints.get(pname, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        doc = param_docs.get(pname)
        if isinstance(default, FieldInfo):
            fields[pname] = (annotation, default)
        elif doc is not None and not has_description(annotation):
            fields[pname] = (annotation, Field(default, description=doc))
        else:
            fields[pname] = (annotation, default)
        names.append(pname)
    try:
        model = create_model(  # type: ignore[call-overload]
            f"{fn.__qualname__.replace('.', '_')}_Arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
    except Exception as exc:
        raise EnvironmentDefinitionError(_unsupported(where, fields, exc)) from None
    return model, tuple(names)


def output_adapter(
    where: str, annotation: Any
) -> tuple[TypeAdapter[Any] | None, dict[str, Any] | None, bool]:
    """The adapter and MCP output schema of a return annotation, and whether it is wrapped."""
    if annotation is inspect.Signature.empty or annotation is Any:
        return None, None, False
    if annotation is None or annotation is type(None):
        return None, None, False
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        schema = adapter.json_schema(mode="serialization")
    except Exception as exc:
        raise EnvironmentDefinitionError(
            f"{where}: no JSON Schema for its return type: {exc}"
        ) from exc
    if is_object_schema(schema):
        schema.pop("title", None)
        return adapter, schema, False
    # MCP requires an object output schema: wrap other values as {"result": value}, and say
    # so (WRAP_KEY) so that clients can unwrap them (as FastMCP's x-fastmcp-wrap-result).
    wrapped = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        WRAP_KEY: True,
    }
    if "$defs" in schema:
        wrapped["$defs"] = schema.pop("$defs")
    return adapter, wrapped, True


_JSON_TYPES = (
    "str, int, float, bool, list[...], dict[str, ...], a pydantic model, an Enum or Literal"
)


def _unsupported(where: str, fields: dict[str, Any], exc: Exception) -> str:
    """One line naming the argument whose type has no JSON Schema, and what to use instead."""
    for pname, (annotation, _) in fields.items():
        try:
            TypeAdapter(annotation).json_schema()
        except Exception:
            shown = getattr(annotation, "__qualname__", None) or repr(annotation)
            module = getattr(annotation, "__module__", "")
            if module and module != "builtins":
                shown = f"{module}.{shown}"
            return (
                f"{where}: unsupported argument type: {pname!r} is a {shown}, which an agent "
                f"cannot send as JSON; fix: use {_JSON_TYPES}"
            )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"{where}: unsupported argument type ({first}); fix: use {_JSON_TYPES}"
