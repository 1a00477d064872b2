"""Argument validation against a tool's JSON Schema, reporting every problem at once.

The SDK builds each tool's input schema from its type hints; this module walks that same schema
over the raw arguments and turns each mismatch into the spec's error codes: `UNKNOWN_FIELD` (with a
did-you-mean), `MISSING_REQUIRED_FIELD`, `TYPE_MISMATCH`, `INVALID_ENUM` (listing allowed values),
`INVALID_VALUE` (ranges) and, through the `x-format` markers, `INVALID_FORMAT`. One schema is
the single source of truth for what the agent is shown and what is enforced.

Example:
    >>> schema = {"type": "object", "additionalProperties": False,
    ...           "properties": {"summary": {"type": "string"}}, "required": ["summary"]}
    >>> [(e.code, e.field, e.extra.get("suggestion")) for e in check_arguments(
    ...     schema, {"title": "x"}, tool="t")]
    [('UNKNOWN_FIELD', 'title', 'summary'), ('MISSING_REQUIRED_FIELD', 'summary', None)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from calendar_gym.tools.formats import FormatContext, check_format
from calendar_gym.tools.suggest import FIELD_HINTS, suggest_field
from calendar_gym.world.errors import ApiError, dumps, nest

__all__ = ["MAX_ID_CHARS", "check_arguments", "check_id_lengths", "describe"]

_TRUE = {"true", "1", "yes", "on", "t", "y"}
_FALSE = {"false", "0", "no", "off", "f", "n"}
_CARRY = ("x-format", "x-example", "description")


def check_arguments(
    schema: dict[str, Any], args: Any, *, tool: str, default_tz: str | Callable[[], str] = "UTC"
) -> list[ApiError]:
    """Every problem of `args` against `schema` (a tool's input schema), in argument order.

    `default_tz` (or a function computing it, called only when a hint needs it) is the zone
    that corrections of date-times quote.
    """
    walker = _Walker(schema.get("$defs", {}), FormatContext(default_tz=default_tz))
    walker.check(schema, args, "")
    return walker.problems


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class _Walker:
    def __init__(self, defs: dict[str, Any], ctx: FormatContext) -> None:
        self.defs = defs
        self.ctx = ctx
        self.problems: list[ApiError] = []

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            target = self.defs[node["$ref"].rsplit("/", 1)[-1]]
            extra = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **extra}
        return node

    # -- the walk ------------------------------------------------------------------------------

    def check(self, node: dict[str, Any], value: Any, path: str) -> None:
        node = self.resolve(node)
        if "anyOf" in node:
            self._any_of(node, value, path)
            return
        if "enum" in node or "const" in node:
            self._enum(node, value, path)
            return
        kind = node.get("type")
        if value is None and kind != "null":
            self._mismatch(node, value, path)
            return
        before = len(self.problems)
        if kind == "object":
            if not isinstance(value, dict):
                self._mismatch(node, value, path)
                return
            self._object(node, value, path)
        elif kind == "array":
            if not isinstance(value, list):
                self._mismatch(node, value, path)
                return
            self._array(node, value, path)
        elif kind is not None and not self._scalar_ok(kind, value):
            self._mismatch(node, value, path)
            return
        else:
            self._range(node, value, path)
        fmt = node.get("x-format")
        if fmt and len(self.problems) == before:
            self.problems += check_format(fmt, value, path or "(arguments)", self.ctx)

    def _any_of(self, node: dict[str, Any], value: Any, path: str) -> None:
        branches = [self.resolve(b) for b in node["anyOf"]]
        real = [b for b in branches if b.get("type") != "null"]
        carried = {k: node[k] for k in _CARRY if k in node}
        if value is None:
            if len(real) < len(branches):
                return
            self._mismatch(node, value, path)
            return
        if len(real) == 1:
            self.check({**real[0], **carried}, value, path)
            return
        best: list[ApiError] | None = None
        for branch in real:
            trial = _Walker(self.defs, self.ctx)
            trial.check({**branch, **carried}, value, path)
            if not trial.problems:
                return
            if best is None or len(trial.problems) < len(best):
                best = trial.problems
        self.problems += best or []

    def _enum(self, node: dict[str, Any], value: Any, path: str) -> None:
        allowed = node["enum"] if "enum" in node else [node["const"]]
        if value in allowed:
            return
        near = None
        if isinstance(value, str):
            near = next((a for a in allowed if str(a).lower() == value.lower()), None)
            if near is None:
                near = suggest_field(value, [str(a) for a in allowed])
        self.problems.append(
            ApiError(
                "INVALID_ENUM",
                f"{path} must be one of {', '.join(map(str, allowed))}; got {dumps(value)}.",
                field=path,
                expected=list(allowed),
                got=value,
                hint=f"Did you mean {near!r}?"
                if near
                else f"Use one of: {', '.join(map(str, allowed))}.",
                suggestion=near,
            )
        )

    def _object(self, node: dict[str, Any], value: dict[str, Any], path: str) -> None:
        props: dict[str, Any] = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                continue
            if isinstance(extra, dict):
                self.check(extra, item, _join(path, key))
            elif extra is False:
                self._unknown(props, key, item, path)
        for key, sub in props.items():
            where = _join(path, key)
            if key in value:
                self.check(sub, value[key], where)
            elif key in node.get("required", ()):
                self._missing(self.resolve(sub), where)

    def _array(self, node: dict[str, Any], value: list[Any], path: str) -> None:
        lo, hi = node.get("minItems"), node.get("maxItems")
        if (lo is not None and len(value) < lo) or (hi is not None and len(value) > hi):
            self.problems.append(
                ApiError(
                    "INVALID_VALUE",
                    f"{path} has {len(value)} items; allowed {lo or 0} to "
                    f"{hi if hi is not None else 'any'}.",
                    field=path,
                    expected=f"{lo or 0}..{hi if hi is not None else ''} items",
                    got=len(value),
                    hint="Remove items." if hi is not None and len(value) > hi else "Add items.",
                )
            )
        items = node.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                self.check(items, item, f"{path}[{i}]")

    @staticmethod
    def _scalar_ok(kind: str, value: Any) -> bool:
        if kind == "string":
            return isinstance(value, str)
        if kind == "integer":
            if isinstance(value, bool):
                return False
            if isinstance(value, float):
                return value.is_integer()
            return isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())
        if kind == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind == "boolean":
            if isinstance(value, bool):
                return True
            if isinstance(value, int):
                return value in (0, 1)
            return isinstance(value, str) and value.lower() in _TRUE | _FALSE
        return True

    def _range(self, node: dict[str, Any], value: Any, path: str) -> None:
        lo, hi = node.get("minimum"), node.get("maximum")
        if lo is None and hi is None and "minLength" not in node:
            return
        if isinstance(value, str) and node.get("type") == "string":
            if len(value) < node.get("minLength", 0):
                self.problems.append(
                    ApiError(
                        "INVALID_VALUE",
                        f"{path} must not be empty.",
                        field=path,
                        expected="a non-empty string",
                        got=value,
                        hint=f"Give {path} a value.",
                    )
                )
            return
        number = float(value)
        if (lo is not None and number < lo) or (hi is not None and number > hi):
            self.problems.append(
                ApiError(
                    "INVALID_VALUE",
                    f"{path} must be between {lo} and {hi}; got {value}.",
                    field=path,
                    expected=f"{lo}..{hi}",
                    got=value,
                    hint=f"Use a value from {lo} to {hi}.",
                )
            )

    # -- problems ------------------------------------------------------------------------------

    def _unknown(self, props: dict[str, Any], key: str, item: Any, path: str) -> None:
        where = _join(path, key)
        if key in ("body", "resource", "event") and isinstance(item, dict) and not path:
            return self._resource_body(props, where, item)
        near = suggest_field(key, props)
        hint = FIELD_HINTS.get(key)
        if near and not hint:
            hint = f"Did you mean {_join(path, near)!r}?"
        elif not hint:
            hint = f"Remove {where!r}; accepted here: {', '.join(props) or 'nothing'}."
        self.problems.append(
            ApiError(
                "UNKNOWN_FIELD",
                f"Unknown argument {where!r}"
                + (f"; did you mean {_join(path, near)!r}?" if near else "."),
                field=where,
                expected=list(props),
                got=item,
                hint=hint,
                example=_nest_example(path, near, item) if near else None,
                suggestion=_join(path, near) if near else None,
            )
        )

    def _resource_body(self, props: dict[str, Any], where: str, item: dict[str, Any]) -> None:
        """`body={...}` (what Google's Python client calls the resource): its fields go at the
        top level here, so the example is the body's own fields, unnested."""
        fields = {k: v for k, v in item.items() if k in props}
        self.problems.append(
            ApiError(
                "UNKNOWN_FIELD",
                f"Unknown argument {where!r}: pass the resource's fields as arguments.",
                field=where,
                expected=list(props),
                got=sorted(item),
                hint=f"Move the fields of {where!r} to the top level "
                f"({', '.join(sorted(fields)) or 'e.g. ' + ', '.join(list(props)[:4])}).",
                example=fields or None,
            )
        )

    def _missing(self, node: dict[str, Any], where: str) -> None:
        hint = f"Add {where!r}."
        if where.endswith("calendarId"):
            hint = (
                "Add calendarId: 'primary' for your own calendar, or an id from calendarList_list."
            )
        elif where.endswith("eventId"):
            hint = "Add eventId: find it with events_list."
        self.problems.append(
            ApiError(
                "MISSING_REQUIRED_FIELD",
                f"Missing required argument {where!r}.",
                field=where,
                expected=describe(node, self.resolve),
                hint=hint,
                example=node.get("x-example") and _nest_example("", where, node["x-example"]),
            )
        )

    def _mismatch(self, node: dict[str, Any], value: Any, path: str) -> None:
        expected = describe(node, self.resolve)
        hint = f"Pass {path or 'the arguments'} as {expected}."
        example = None
        node = self.resolve(node)
        real = node
        if "anyOf" in node:
            opts = [self.resolve(b) for b in node["anyOf"] if self.resolve(b).get("type") != "null"]
            real = opts[0] if len(opts) == 1 else node
        if real.get("type") == "object" and isinstance(value, str):
            fix = _wrap_string(real, value)
            if fix is not None:
                example = _nest_example("", path, fix)
                hint = f"{path} is an object: pass {dumps(fix)}."
        elif real.get("type") == "array" and not isinstance(value, list):
            items = self.resolve(real.get("items", {}))
            inner = _wrap_string(items, value) if isinstance(value, str) else None
            example = _nest_example("", path, [inner if inner is not None else value])
            hint = f"{path} is a list: wrap the value in [...]."
        self.problems.append(
            ApiError(
                "TYPE_MISMATCH",
                f"{path or 'arguments'} must be {expected}, not {_json_type(value)}.",
                field=path or None,
                expected=expected,
                got=value,
                hint=hint,
                example=example,
            )
        )


def _wrap_string(node: dict[str, Any], value: str) -> dict[str, Any] | None:
    """How a string given where an object is expected should have been written."""
    if node.get("x-format") == "event-datetime":
        key = "date" if len(value.strip()) == 10 else "dateTime"
        return {key: value}
    if node.get("x-format") == "acl-scope":
        if value == "default":
            return {"type": "default"}
        return {"type": "user" if "@" in value else "domain", "value": value}
    required = node.get("required", [])
    if len(required) == 1:
        return {required[0]: value}
    return None


def _nest_example(path: str, key: str | None, value: Any) -> Any:
    return nest(_join(path, key) if key else path, value)


def describe(node: dict[str, Any], resolve: Any = None) -> str:
    """A short English description of what a schema accepts."""
    if resolve is not None:
        node = resolve(node)
    if "anyOf" in node:
        parts = [
            describe(b, resolve)
            for b in node["anyOf"]
            if (resolve(b) if resolve else b).get("type") != "null"
        ]
        return " or ".join(parts)
    if "enum" in node:
        return "one of " + ", ".join(map(str, node["enum"]))
    if "const" in node:
        return repr(node["const"])
    kind = node.get("type", "any value")
    if kind == "array":
        return f"array of {describe(node.get('items', {}), resolve)}"
    if kind == "object":
        props = list(node.get("properties", {}))
        if node.get("x-example") is not None:
            return f"object like {dumps(node['x-example'])}"
        return f"object with {', '.join(props)}" if props else "object"
    if kind == "string" and node.get("x-format"):
        return f"string ({node['x-format']})"
    return str(kind)


MAX_ID_CHARS = 2048  # Google's ids are <= 1,024 characters, an instance id adds its suffix


def check_id_lengths(args: dict[str, Any]) -> None:
    """Refuse an `...Id` argument over `MAX_ID_CHARS` (a 100k-character id failed in SQLite)."""
    for key, value in args.items():
        if key.endswith("Id") and isinstance(value, str) and len(value) > MAX_ID_CHARS:
            raise ApiError(
                "INVALID_VALUE",
                f"{key} is {len(value):,} characters long; an id is at most {MAX_ID_CHARS:,}.",
                field=key,
                got=value[:80] + "...",
                hint="Copy the id from a listing (calendarList_list, events_list).",
            )
