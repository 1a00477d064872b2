"""From a tool's JSON Schema to a Python method a trainer can read: a signature with type hints
and a Google-style docstring, as `transformers.utils.get_json_schema` expects them.

`get_json_schema` understands basic types, `Literal`, `list[...]`, `tuple[...]`, `dict[str, ...]`,
unions and `Any` - no models. So each argument's hint says as much of its schema as those can, and
where the schema says more (nested object fields, bounds, formats, defaults) its description
carries the compact schema as JSON, on one line, so the model still reads all of it. Argument
names that are not Python identifiers are renamed (`x-y` → `x_y`) and mapped back on the call.

Example:
    >>> plan = MethodPlan.build("add", "Add numbers.", {"type": "object",
    ...     "properties": {"a": {"type": "integer", "description": "first"},
    ...                    "b": {"type": "integer", "default": 1}}, "required": ["a"]})
    >>> print(plan.docstring)
    Add numbers.
    <BLANKLINE>
    Args:
        a: first
        b: The b argument. Default: 1.
    >>> plan.signature
    <Signature (self, *, a: int, b: int = <unset>) -> str>
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
from dataclasses import dataclass
from typing import Any, Literal, Union

__all__ = ["UNSET", "MethodPlan", "hint_for"]

_PLAIN_KEYS = frozenset({"type", "description", "title", "enum", "const", "default"})
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})
_SCALARS = (str, int, float, bool, type(None))
_SECTION = re.compile(r"\b(Args|Arguments|Returns|Raises|Yields)\s*:")
_MAX_DEPTH = 6


class _Unset:
    """The default of an optional argument the model left out (never sent to the environment)."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()

_SIMPLE: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
    "array": list,
    "object": dict,
}


def _union(hints: list[Any]) -> Any:
    unique: list[Any] = []
    for h in hints:
        if h not in unique:
            unique.append(h)
    if not unique:
        return Any
    if Any in unique:
        return Any
    return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007


def _resolve(schema: Any, defs: dict[str, Any], depth: int) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if isinstance(ref, str) and ref.startswith("#/$defs/") and depth < _MAX_DEPTH:
        target = defs.get(ref.removeprefix("#/$defs/"))
        if isinstance(target, dict):
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            return _resolve(merged, defs, depth + 1)
    return schema


def hint_for(schema: Any, defs: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """The type hint that says most of `schema` in what `get_json_schema` understands.

    Example:
        >>> hint_for({"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]})
        typing.Optional[typing.Literal['a', 'b']]
    """
    defs = defs or {}
    schema = _resolve(schema, defs, depth)
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return Any
    if "const" in schema and isinstance(schema["const"], _SCALARS):
        return Literal[schema["const"]]  # type: ignore[valid-type]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, _SCALARS) for v in enum):
        return Literal[tuple(dict.fromkeys(enum))]  # type: ignore[valid-type]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _union([hint_for(o, defs, depth + 1) for o in options])
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        return hint_for(all_of[0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([hint_for({**schema, "type": k}, defs, depth + 1) for k in kind])
    if kind == "array":
        items = schema.get("items")
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and len(prefix) > 1 and items is False:
            return tuple[tuple(hint_for(p, defs, depth + 1) for p in prefix)]  # type: ignore[misc]
        return list[hint_for(items, defs, depth + 1)] if isinstance(items, dict) else list
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and not schema.get("properties"):
            return dict[str, hint_for(extra, defs, depth + 1)]
        return dict[str, Any]
    return _SIMPLE.get(kind, Any) if isinstance(kind, str) else Any


def _inline(schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """`schema` with `$ref`s expanded (bounded) and titles dropped: what the model reads."""
    schema = _resolve(schema, defs, depth)
    if isinstance(schema, dict):
        return {
            k: _inline(v, defs, depth + 1)
            for k, v in schema.items()
            if k not in ("title", "$defs") and not (k == "$ref" and depth >= _MAX_DEPTH)
        }
    if isinstance(schema, list):
        return [_inline(v, defs, depth + 1) for v in schema]
    return schema


def _simple(schema: Any, defs: dict[str, Any], depth: int = 0) -> bool:
    """Whether the type hint of `schema` says all of it (so the description needs no schema)."""
    schema = _resolve(schema, defs, depth)
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return False
    keys = set(schema) - {"description", "title", "default"}
    for union in ("anyOf", "oneOf"):
        if union in keys:
            return keys == {union} and all(_simple(o, defs, depth + 1) for o in schema[union])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if kind == "array":
        return keys <= {"type", "items"} and _simple(schema.get("items", {}), defs, depth + 1)
    return keys <= _PLAIN_KEYS and all(k is None or k in _SCALAR_TYPES for k in kinds)


def _one_line(text: str) -> str:
    """Docstring-safe text: one line, no section headers `get_json_schema` would split on."""
    flat = " ".join(str(text).split())
    return _SECTION.sub(lambda m: f"{m[1]} -", flat)


def _python_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"\W", "_", name, flags=re.ASCII).lstrip("_") or "arg"
    if base[0].isdigit():
        base = "arg_" + base
    if keyword.iskeyword(base) or base == "self":
        base += "_"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    taken.add(candidate)
    return candidate


@dataclass(frozen=True, slots=True)
class MethodPlan:
    """What one tool becomes as a method: its name, docstring, signature and argument names.

    `wire_names` maps each Python argument name back to the schema's name.
    """

    name: str
    docstring: str
    signature: inspect.Signature
    annotations: dict[str, Any]
    wire_names: dict[str, str]

    @classmethod
    def build(cls, name: str, description: str, input_schema: dict[str, Any]) -> MethodPlan:
        """The plan for tool `name` with `description` and JSON Schema `input_schema`."""
        defs: dict[str, Any] = dict(input_schema.get("$defs") or {})
        props: dict[str, Any] = dict(input_schema.get("properties") or {})
        required = set(input_schema.get("required") or [])
        taken: set[str] = set()
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        annotations: dict[str, Any] = {}
        wire: dict[str, str] = {}
        lines: list[str] = []
        for wire_name, raw in props.items():
            py = _python_name(str(wire_name), taken)
            wire[py] = str(wire_name)
            schema = _resolve(raw, defs, 0) if isinstance(raw, dict) else {}
            hint = hint_for(schema, defs)
            annotations[py] = hint
            default = inspect.Parameter.empty if wire_name in required else UNSET
            params.append(
                inspect.Parameter(
                    py, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint
                )
            )
            lines.append(f"    {py}: {_describe(str(wire_name), py, schema, defs)}")
        annotations["return"] = str
        summary = _one_line(description) or f"Call the {name} tool."
        doc = summary + ("\n\nArgs:\n" + "\n".join(lines) if lines else "")
        return cls(
            name=name,
            docstring=doc,
            signature=inspect.Signature(params, return_annotation=str),
            annotations=annotations,
            wire_names=wire,
        )


def _describe(wire_name: str, py: str, schema: dict[str, Any], defs: dict[str, Any]) -> str:
    text = _one_line(schema.get("description") or "") or f"The {wire_name} argument."
    if py != wire_name:
        text += f" (the tool's {wire_name!r} argument)"
    default = schema.get("default")
    if default is not None:
        text += f" Default: {json.dumps(default, ensure_ascii=False, default=str)}."
    if not _simple(schema, defs):  # more than the hint can say: give the model the schema itself
        detail = {
            k: v for k, v in _inline(schema, defs).items() if k not in ("description", "default")
        }
        text += " JSON Schema: " + json.dumps(detail, separators=(",", ":"), ensure_ascii=False)
    # `get_json_schema` reads a trailing "(choices: [...])" as an enum: never end like that
    return text + "." if text.rstrip().endswith(")") and "(choices:" in text.lower() else text
