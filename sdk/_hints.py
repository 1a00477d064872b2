"""From Python signatures to what agents read: docstring texts, hint inspection, and
validation errors flattened for agents. The pieces `ToolSpec` is built from."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError
from pydantic.fields import FieldInfo

from mcpgym.context import ToolContext
from mcpgym.errors import EnvironmentDefinitionError

__all__ = ["jsonable", "parse_docstring", "strict_jsonable", "validation_errors"]


def validation_errors(exc: PydanticValidationError) -> list[dict[str, Any]]:
    """Flatten pydantic errors into `{"field", "message", "type", "got"}` items for agents."""
    out: list[dict[str, Any]] = []
    for err in exc.errors(include_url=False):
        item: dict[str, Any] = {
            "field": ".".join(str(p) for p in err["loc"]) or "(root)",
            "message": err["msg"],
            "type": err["type"],
        }
        if "input" in err and err["type"] != "missing":
            item["got"] = jsonable(err["input"])
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
