"""What a validation run produces: one `CheckResult` per check, gathered in a `Report`.

Statuses: `pass`, `fail` (the environment breaks the property; the message says how to fix it),
`error` (the validator itself failed), `skip` (could not run, with the reason) and `n/a` (does not
apply). A check's `severity` is `fail` or `warn`: a failed `warn` check is reported but does not
change the exit code. Everything that depends on the clock sits in `timings`, apart from the rest,
so two runs of one environment give identical `Report.deterministic_dict()`s.

Exit codes (`Report.exit_code`): 0 ok, 1 a check failed, 2 usage or bad manifest, 3 validator
error, 4 a fail-severity check was skipped.

Example:
    >>> r = Report(target="demo", level="static")
    >>> r.add(CheckResult("check_manifest", "static", "pass"))
    >>> r.exit_code, r.counts()["pass"]
    (0, 1)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "EXIT_BAD_MANIFEST",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_SKIPPED",
    "EXIT_VALIDATOR_ERROR",
    "LEVELS",
    "CheckResult",
    "Level",
    "Report",
    "Severity",
    "Status",
]

Status = Literal["pass", "fail", "error", "skip", "n/a"]
Severity = Literal["fail", "warn"]
Level = Literal["static", "runtime", "semantic"]
LEVELS: tuple[Level, ...] = ("static", "runtime", "semantic")

EXIT_OK = 0
"""Every check that ran passed (skips with a reason are fine)."""
EXIT_FAILED = 1
"""A check failed."""
EXIT_BAD_MANIFEST = 2
"""Usage error, or the manifest is missing or invalid."""
EXIT_VALIDATOR_ERROR = 3
"""The validator itself failed (a bug or an environment it could not run)."""
EXIT_SKIPPED = 4
"""A fail-severity check was skipped, so the environment is not known to pass."""


@dataclass(slots=True)
class CheckResult:
    """The outcome of one check: `message` says what was found, `fix` how to repair it."""

    name: str
    level: Level
    status: Status
    message: str = ""
    fix: str = ""
    severity: Severity = "fail"
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Report:
    """Every check's result for one target at one level (see the module docstring)."""

    target: str
    level: Level
    results: list[CheckResult] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    bad_manifest: bool = False
    notes: list[str] = field(default_factory=list)
    """What the run covered (the task sets and episodes played); part of the report."""

    def add(self, result: CheckResult, seconds: float | None = None) -> None:
        """Record one result (and how long the check took)."""
        self.results.append(result)
        if seconds is not None:
            self.timings[result.name] = round(seconds, 3)

    def get(self, name: str) -> CheckResult | None:
        """The result of check `name`, if it ran."""
        return next((r for r in self.results if r.name == name), None)

    def counts(self) -> dict[str, int]:
        """How many results have each status."""
        out = {s: 0 for s in ("pass", "fail", "error", "skip", "n/a")}
        for r in self.results:
            out[r.status] += 1
        return out

    @property
    def failed(self) -> list[CheckResult]:
        """Failed checks of severity `fail`."""
        return [r for r in self.results if r.status == "fail" and r.severity == "fail"]

    @property
    def ok(self) -> bool:
        """Whether the exit code is 0."""
        return self.exit_code == EXIT_OK

    @property
    def exit_code(self) -> int:
        """0 ok, 1 failed, 2 bad manifest, 3 validator error, 4 a fail-severity check skipped."""
        if self.bad_manifest:
            return EXIT_BAD_MANIFEST
        if any(r.status == "error" for r in self.results):
            return EXIT_VALIDATOR_ERROR
        if self.failed:
            return EXIT_FAILED
        if any(r.status == "skip" and r.severity == "fail" for r in self.results):
            return EXIT_SKIPPED
        return EXIT_OK

    def deterministic_dict(self) -> dict[str, Any]:
        """The report without timings: identical across runs of the same environment."""
        return {
            "target": self.target,
            "level": self.level,
            "exit_code": self.exit_code,
            "counts": self.counts(),
            "notes": list(self.notes),
            "results": [asdict(r) for r in self.results],
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole report, timings included (what `--json` prints)."""
        return {**self.deterministic_dict(), "timings": dict(self.timings)}

    def to_json(self) -> str:
        """`to_dict()` as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, default=str)

    def to_text(self) -> str:
        """A human-readable listing: one line per check, then the fix of each failure."""
        marks = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "skip": "SKIP", "n/a": "N/A "}
        lines = [f"mcpgym validate {self.target} (level {self.level})"]
        lines += [f"  {note}" for note in self.notes]
        for r in self.results:
            mark = "WARN" if r.status == "fail" and r.severity == "warn" else marks[r.status]
            lines.append(f"  {mark:5} {r.name:34} {r.message}")
            if r.fix and r.status in ("fail", "error"):
                lines.append(f"        fix: {r.fix}")
            table = r.details.get("table")
            if isinstance(table, str) and table:
                lines += [f"        {row}".rstrip() for row in table.splitlines()]
        c = self.counts()
        summary = ", ".join(f"{v} {k}" for k, v in c.items() if v)
        lines.append(f"{summary}; exit code {self.exit_code}")
        return "\n".join(lines)
