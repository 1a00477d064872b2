"""The naive agent's one retry: patch the failed call with what the error suggests.

Only a structured error says how to fix a call: its `example` fragments (the top-level one and
one per problem in `errors`) are merged into the arguments, and an `UNKNOWN_FIELD` with a
`suggestion` renames the field. Google-style and plain-text errors carry neither, so there is
nothing to retry with — which is exactly the effect of `error_mode` the benchmark measures.

Example:
    >>> err = {"error": {"code": "INVALID_FORMAT", "example": {"start": {"dateTime": "T-05:00"}},
    ...                  "errors": []}}
    >>> fixed_arguments({"start": {"dateTime": "T"}, "summary": "x"}, err)
    {'start': {'dateTime': 'T-05:00'}, 'summary': 'x'}
    >>> fixed_arguments({"summary": "x"}, {"message": "events_insert failed: ..."}) is None
    True
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["fixed_arguments"]


def _merge(target: dict[str, Any], fragment: Mapping[str, Any]) -> None:
    for key, value in fragment.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def fixed_arguments(args: Mapping[str, Any], error: Mapping[str, Any]) -> dict[str, Any] | None:
    """`args` corrected from a structured error, or None when the error gives no fix."""
    body = error.get("error")
    if not isinstance(body, Mapping):
        return None
    problems = [p for p in body.get("errors") or [] if isinstance(p, Mapping)] or [body]
    fixed = copy.deepcopy(dict(args))
    changed = False
    for problem in problems:
        example = problem.get("example")
        if isinstance(example, Mapping) and example:
            _merge(fixed, example)
            changed = True
        field, suggestion = problem.get("field"), problem.get("suggestion")
        if (
            problem.get("code") == "UNKNOWN_FIELD"
            and isinstance(suggestion, str)
            and field in fixed
        ):
            fixed[suggestion] = fixed.pop(field)
            changed = True
    return fixed if changed and fixed != dict(args) else None
