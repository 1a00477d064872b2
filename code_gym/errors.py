"""Code Gym's errors: a tool raises one `CodeError`; `render` shapes it for the agent.

A failed *call* (a path outside the workspace, a missing file, both `file` and `code` given, an
episode that is over) is a `CodeError`, rendered in the session's `error_mode`:

- `structured`: `{"error": {"code", "message", "tool", "field", "got", "hint", ...}}` as the
  tool error's detail (MCP `structuredContent`), so an agent can correct the call;
- `plain`: one line of text, nothing structured.

A failed *program* (a `SyntaxError`, a traceback, a failing test) is not a failed call: the
result says so (`ok: false`), and in `structured` mode carries `error` with `type`, `message`,
`file`, `line`, `column` (see `code_gym.outcomes`).

Example:
    >>> err = CodeError("FILE_NOT_FOUND", "No file 'x.py' in the workspace.", field="path",
    ...                 got="x.py", hint="Call list_files to see what exists.")
    >>> render(err, "structured", "read_file").to_info()["error"]["code"]
    'FILE_NOT_FOUND'
    >>> print(render(err, "plain", "read_file").message)
    read_file failed: No file 'x.py' in the workspace.
"""

from __future__ import annotations

from typing import Any, Literal

from mcpgym.errors import InvalidToolArguments, ToolError, ToolExecutionError

__all__ = ["CODES", "ERROR_MODES", "CodeError", "ErrorMode", "render"]

ErrorMode = Literal["structured", "plain"]
ERROR_MODES: tuple[ErrorMode, ...] = ("structured", "plain")

CODES: dict[str, type[ToolError]] = {
    "INVALID_PATH": InvalidToolArguments,
    "FILE_NOT_FOUND": InvalidToolArguments,
    "FILE_TOO_LARGE": InvalidToolArguments,
    "INVALID_ARGUMENTS": InvalidToolArguments,
    "NO_TASK": ToolExecutionError,
    "EPISODE_OVER": ToolExecutionError,
    "SANDBOX_UNAVAILABLE": ToolExecutionError,
    "SANDBOX_BUSY": ToolExecutionError,
}


class CodeError(Exception):
    """A failed tool call, independent of how it is rendered.

    Args:
        code: one of `CODES`.
        message: what is wrong, naming the argument and the value.
        field: the argument at fault, if any.
        got: the offending value.
        hint: how to fix the call.
        **extra: further structured detail.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        got: Any = None,
        hint: str | None = None,
        **extra: Any,
    ) -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code, self.message, self.field, self.got, self.hint = code, message, field, got, hint
        self.extra = extra

    def structured(self, tool: str) -> dict[str, Any]:
        """The `error` object of `structured` mode."""
        body: dict[str, Any] = {"code": self.code, "message": self.message, "tool": tool}
        for key in ("field", "got", "hint"):
            if getattr(self, key) is not None:
                body[key] = getattr(self, key)
        return {**body, **self.extra}


def render(err: CodeError, mode: ErrorMode, tool: str) -> ToolError:
    """The SDK `ToolError` carrying `err` to the agent in `mode`."""
    cls = CODES[err.code]
    if mode == "structured":
        return cls(err.message, error=err.structured(tool))
    return cls(f"{tool} failed: {err.message}")
