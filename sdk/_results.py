"""A tool's return value as JSON data, the same on every transport, and bounded in size.

`MCPEnvironment` converts what a tool returned here: in the worker thread that ran a sync tool
of a `blocking` class (so a large conversion does not happen on the event loop), on the loop
otherwise. With a limit (`MCPEnvironment.max_result_bytes`, set by the server), a result whose
JSON would exceed it is `ResultTooLarge`: before it is converted when its size is plain from the
value itself (a long list, a long string), after otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from mcpgym._hints import exception_text
from mcpgym.errors import ResultTooLarge, ToolError, ToolExecutionError
from mcpgym.runtime import crashes
from mcpgym.runtime.json_size import size_at_least
from mcpgym.tools import ToolSpec

__all__ = ["dump_result", "dumping"]


def dump_result(spec: ToolSpec, value: Any, limit: int | None = None) -> Any:
    """The result as JSON data, or a tool error (the same on every transport) when it is not.

    With `limit`, a result whose JSON is over it is `ResultTooLarge`: refused before it is
    converted when its size is plain from the value itself (a long list, a long string), and
    after otherwise.
    """
    if limit is not None and (size := size_at_least(value, limit)) > limit:
        raise ResultTooLarge(spec.name, limit, size)
    try:
        dumped = spec.dump_result(value)
    except Exception as exc:
        raise ToolExecutionError(
            f"the tool returned a value that cannot be sent as JSON "
            f"({type(value).__name__}): {type(exc).__name__}: {str(exc)[:200]}",
            tool=spec.name,
        ) from None
    if limit is not None and (size := size_at_least(dumped, limit)) > limit:
        raise ResultTooLarge(spec.name, limit, size)
    return dumped


def dumping(spec: ToolSpec, method: Callable[..., Any], limit: int | None) -> Callable[..., Any]:
    """`method`, returning its result converted by `dump_result` (in the thread it runs in)."""

    @functools.wraps(method)
    def run(**kwargs: Any) -> Any:
        try:
            value = method(**kwargs)
        except ToolError:
            raise
        except Exception as exc:  # logged with its traceback, as every environment exception
            env = getattr(method, "__self__", None)
            call = f"{type(env).__name__}.{spec.name} (tool)"
            detail = crashes.record(env, call, exc, **crashes.TOOL)
            raise ToolExecutionError(exception_text(exc), tool=spec.name, **detail) from exc
        return dump_result(spec, value, limit)

    return run
