"""How a check is written: a small function that raises `Fail`, `Skip` or `NotApplicable`.

Like Gymnasium's checker, each `check_*` asserts one property and, when it does not hold, says
how to fix it. `@check(level, needs=..., severity=...)` registers it; `needs` names checks whose
failure makes this one meaningless (it is then skipped, naming the failed prerequisite), so one
defect shows as exactly one failed check.

Example:
    >>> @check("static", register=False)
    ... def check_nothing(ctx):
    ...     '''Nothing is wrong.'''
    >>> check_nothing.level, check_nothing.doc
    ('static', 'Nothing is wrong.')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpgym.validate.report import Level, Severity

__all__ = [
    "CHECKS",
    "Check",
    "Fail",
    "NotApplicable",
    "Skip",
    "Verdict",
    "check",
    "count",
]


class Fail(Exception):
    """The property does not hold: `message` is what was found, `fix` how to repair it."""

    def __init__(self, message: str, fix: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.details = details


class Verdict(str):
    """A pass message that carries details too (a table the report prints under the check).

    Example:
        >>> v = Verdict("3 gamers below their gates", table="...")
        >>> str(v), v.details
        ('3 gamers below their gates', {'table': '...'})
    """

    details: dict[str, Any]

    def __new__(cls, message: str, **details: Any) -> Verdict:
        made = super().__new__(cls, message)
        made.details = details
        return made


class Skip(Exception):
    """The check could not run; the message is the reason."""


class NotApplicable(Exception):
    """The property does not apply to this environment; the message says why."""


@dataclass(frozen=True)
class Check:
    """A registered check (see the module docstring)."""

    fn: Callable[[Any], str | None]
    level: Level
    needs: tuple[str, ...] = ()
    severity: Severity = "fail"
    fixes: str = ""
    name: str = field(init=False)
    doc: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.fn.__name__)
        object.__setattr__(self, "doc", (inspect.getdoc(self.fn) or "").split("\n\n")[0])

    def __call__(self, ctx: Any) -> str | None:
        return self.fn(ctx)


CHECKS: list[Check] = []
"""Every check, in the order they run (static, then runtime, then semantic)."""


def check(
    level: Level,
    *,
    needs: tuple[str, ...] = (),
    severity: Severity = "fail",
    register: bool = True,
) -> Callable[[Callable[[Any], str | None]], Check]:
    """Register a `check_*` function at `level`; it returns a pass message or raises."""

    def wrap(fn: Callable[[Any], str | None]) -> Check:
        made = Check(fn, level, needs, severity)
        if register:
            CHECKS.append(made)
        return made

    return wrap


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun` in agreement: `count(1, "step")` is "1 step", `count(2, "step")` "2 steps"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
