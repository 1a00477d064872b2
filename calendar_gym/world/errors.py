"""Calendar Gym's errors: tools raise one `ApiError`; `render` shapes it for the agent.

Every code of the spec has a fixed category, HTTP status, retryability and Google equivalent
(`CODES`). A call's field problems are gathered into one `ApiError` (`ApiError.many`) so the agent
sees all of them at once. `render(err, mode, tool)` turns it into the SDK's `ToolError` subclass
carrying the chosen `error_mode`:

- `structured`: `{"error": {"code", "category", "http_status", "tool", "field", "message",
  "expected", "got", "hint", "example", "retryable", "errors", ...}}` (plus role or scope detail);
- `google`: Google Calendar API v3's own `{"error": {"code", "message", "errors", "status"}}`;
- `plain`: one line of text, nothing structured.

Example:
    >>> err = ApiError("NOT_FOUND", "Calendar 'x' was not found.", field="calendarId", got="x")
    >>> render(err, "structured", "events_list").to_info()["error"]["http_status"]
    404
    >>> print(render(err, "plain", "events_list").message)
    events_list failed: Calendar 'x' was not found.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from mcpgym.errors import InvalidToolArguments, ToolError, ToolExecutionError, ToolNotFound

__all__ = [
    "CALENDAR_REASONS",
    "CODES",
    "ERROR_MODES",
    "ApiError",
    "CalendarInvalidArguments",
    "CalendarToolFailure",
    "CalendarUnknownTool",
    "CodeInfo",
    "ErrorMode",
    "dumps",
    "nest",
    "render",
]

ErrorMode = Literal["structured", "google", "plain"]
ERROR_MODES: tuple[ErrorMode, ...] = ("structured", "google", "plain")


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """What a code means everywhere: category, HTTP status, retryability, Google equivalents."""

    category: str
    http_status: int
    retryable: bool
    google_reason: str
    google_status: str


CODES: dict[str, CodeInfo] = {
    "MISSING_REQUIRED_FIELD": CodeInfo("validation", 400, True, "required", "INVALID_ARGUMENT"),
    "TYPE_MISMATCH": CodeInfo("validation", 400, True, "invalid", "INVALID_ARGUMENT"),
    "INVALID_ENUM": CodeInfo("validation", 400, True, "invalid", "INVALID_ARGUMENT"),
    "UNKNOWN_FIELD": CodeInfo("validation", 400, True, "badRequest", "INVALID_ARGUMENT"),
    "INVALID_FORMAT": CodeInfo("validation", 400, True, "invalid", "INVALID_ARGUMENT"),
    "INVALID_VALUE": CodeInfo("validation", 400, True, "invalid", "INVALID_ARGUMENT"),
    "NOT_FOUND": CodeInfo("not_found", 404, True, "notFound", "NOT_FOUND"),
    # requiredAccessLevel: what Google's calendar answers a too-low role with (seen in public
    # error reports, e.g. "403: requiredAccessLevel - You need to have owner access to this
    # calendar."; not on the errors guide).
    "PERMISSION_DENIED": CodeInfo(
        "permission", 403, False, "requiredAccessLevel", "PERMISSION_DENIED"
    ),
    "INSUFFICIENT_SCOPE": CodeInfo(
        "authorization", 403, False, "insufficientPermissions", "PERMISSION_DENIED"
    ),
    "FORBIDDEN_OPERATION": CodeInfo("forbidden", 403, False, "forbidden", "FAILED_PRECONDITION"),
    "CONFLICT": CodeInfo("conflict", 409, True, "duplicate", "ALREADY_EXISTS"),
    # Google's usage limits (403 quotaExceeded); here: events per calendar, calendars per world.
    "QUOTA_EXCEEDED": CodeInfo("forbidden", 403, False, "quotaExceeded", "RESOURCE_EXHAUSTED"),
    # Ours, not Google's: a per-call budget on recurrence expansion (see event_query).
    "RESULT_TOO_LARGE": CodeInfo("validation", 400, True, "badRequest", "INVALID_ARGUMENT"),
    "UNKNOWN_TOOL": CodeInfo("unknown_tool", 404, True, "notFound", "NOT_FOUND"),
    "INTERNAL": CodeInfo("internal", 500, False, "backendError", "INTERNAL"),
}

_UNSET: Any = object()
CALENDAR_REASONS = frozenset({"timeRangeEmpty", "requiredAccessLevel", "cannotChangeOwnAcl"})
"""Reasons Google reports in its `calendar` error domain (the others are `global`)."""


class ApiError(Exception):
    """A failed tool call, independent of how it will be rendered.

    Args:
        code: one of `CODES`.
        message: one or two sentences saying what is wrong, naming the field and value.
        field: the argument path (`start.dateTime`, `attendees[1].email`), if any.
        expected: what would have been accepted (text, or a list of allowed values).
        got: the offending value (omit for "not given").
        hint: how to fix the call, concretely.
        example: a corrected argument fragment.
        google_message: the terse text Google's API would show (for `error_mode="google"`).
        google_reason: Google's reason when it is more specific than the code's (e.g.
            `timeRangeEmpty`), and `google_http` its HTTP status when it differs (410 `deleted`).
        **extra: further structured detail (`required_role`, `suggestion`, ...).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        expected: Any = None,
        got: Any = _UNSET,
        hint: str | None = None,
        example: Any = None,
        google_message: str | None = None,
        google_reason: str | None = None,
        google_http: int | None = None,
        errors: list[ApiError] | None = None,
        **extra: Any,
    ) -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.expected = expected
        self.got = None if got is _UNSET else got
        self.hint = hint
        self.example = example
        self.google_message = google_message
        self.google_reason = google_reason
        self.google_http = google_http
        self.errors = errors or []
        self.extra = extra

    @property
    def info(self) -> CodeInfo:
        """The code's fixed properties."""
        return CODES[self.code]

    @classmethod
    def many(cls, problems: list[ApiError]) -> ApiError:
        """One error for several problems of one call: the first leads, `errors` lists all."""
        if not problems:
            raise ValueError("no problems to report")
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        listing = "; ".join(p.message for p in problems)
        return cls(
            first.code,
            f"{len(problems)} problems with the arguments: {listing}",
            field=first.field,
            expected=first.expected,
            got=first.got,
            hint=first.hint,
            example=first.example,
            google_message=first.google_message,
            google_reason=first.google_reason,
            google_http=first.google_http,
            errors=list(problems),
            **first.extra,
        )

    # -- renderings -----------------------------------------------------------------------------

    def item(self) -> dict[str, Any]:
        """The compact form used inside `errors` (and for per-calendar freebusy errors)."""
        out: dict[str, Any] = {
            "code": self.code,
            "field": self.field,
            "message": self.message,
            "expected": self.expected,
            "got": self.got,
            "hint": self.hint,
        }
        if self.example is not None:
            out["example"] = self.example
        out.update(self.extra)
        return out

    def structured(self, tool: str) -> dict[str, Any]:
        """The spec's structured error object."""
        info = self.info
        body: dict[str, Any] = {
            "code": self.code,
            "category": info.category,
            "http_status": info.http_status,
            "tool": tool,
            "field": self.field,
            "message": self.message,
            "expected": self.expected,
            "got": self.got,
            "hint": self.hint,
            "example": self.example,
            "retryable": info.retryable,
        }
        body.update(self.extra)
        body["errors"] = [p.item() for p in self.errors]
        return {"error": body}

    def google_text(self) -> str:
        """The terse message Google's API would give."""
        if self.google_message:
            return self.google_message
        return _GOOGLE_DEFAULTS[self.code].format(field=self.field or "request")

    def google(self) -> dict[str, Any]:
        """Google Calendar API v3's error shape (no hints, no expected values)."""
        info = self.info
        items = []
        for p in self.errors or [self]:
            reason = p.google_reason or p.info.google_reason
            entry: dict[str, Any] = {
                "domain": "calendar" if reason in CALENDAR_REASONS else "global",
                "reason": reason,
                "message": p.google_text(),
            }
            if p.field and p.info.category == "validation":
                entry["locationType"] = "parameter"
                entry["location"] = p.field
            items.append(entry)
        return {
            "error": {
                "code": self.google_http or info.http_status,
                "message": self.google_text(),
                "errors": items,
                "status": info.google_status,
            }
        }

    def plain(self, tool: str) -> str:
        """One line of text."""
        return f"{tool} failed: {' '.join(self.message.split())}"


_GOOGLE_DEFAULTS = {
    "MISSING_REQUIRED_FIELD": "Required parameter: {field}",
    "TYPE_MISMATCH": "Invalid value at '{field}'",
    "INVALID_ENUM": "Invalid value at '{field}'",
    "UNKNOWN_FIELD": 'Invalid JSON payload received. Unknown name "{field}": Cannot find field.',
    "INVALID_FORMAT": "Invalid value for: {field}",
    "INVALID_VALUE": "Invalid value for: {field}",
    "NOT_FOUND": "Not Found",
    "PERMISSION_DENIED": "Forbidden",
    "INSUFFICIENT_SCOPE": "Request had insufficient authentication scopes.",
    "FORBIDDEN_OPERATION": "Forbidden",
    "CONFLICT": "The requested identifier already exists.",
    "RESULT_TOO_LARGE": "Too many occurrences in the requested window.",
    "UNKNOWN_TOOL": "Method not found.",
    "INTERNAL": "Backend Error",
}


class CalendarInvalidArguments(InvalidToolArguments):
    """A validation-category calendar error (`error_type` `invalid_args`)."""


class CalendarUnknownTool(ToolNotFound):
    """`UNKNOWN_TOOL` (`error_type` `tool_not_found`)."""


class CalendarToolFailure(ToolExecutionError):
    """Every other calendar error (`error_type` `execution_error`)."""


def render(err: ApiError, mode: ErrorMode, tool: str) -> ToolError:
    """The SDK `ToolError` that carries `err` to the agent in `mode`.

    The inner object of `{"error": {...}}` travels as the exception's `error` detail, so
    `ToolError.to_info()` (what `CallToolObservation.error` and MCP `structuredContent` carry) is
    `{"error_type", "message", "error": {...}}`; `plain` carries only the message.
    """
    if err.code == "UNKNOWN_TOOL":
        cls: type[ToolError] = CalendarUnknownTool
    elif err.info.category == "validation":
        cls = CalendarInvalidArguments
    else:
        cls = CalendarToolFailure
    if mode == "structured":
        return cls(err.message, error=err.structured(tool)["error"])
    if mode == "google":
        body = err.google()["error"]
        return cls(body["message"], error=body)
    return cls(err.plain(tool))


def nest(path: str, value: Any) -> Any:
    """The argument fragment that puts `value` at `path`: `a[0].b` → `{"a": [{"b": value}]}`."""
    out = value
    for part in reversed([p for p in path.split(".") if p]):
        name, *indices = part.split("[")
        for _ in indices:
            out = [out]
        out = {name: out}
    return out


def dumps(value: Any) -> str:
    """Compact JSON for quoting a value inside a message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
