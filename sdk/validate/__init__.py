"""`mcpgym validate`: RFC 008 validation levels 1-3 as small `check_*` functions.

- **static** (level 1): the manifest and the code — schema, entry point, the `check_env`
  contract, dependency pinning, declared tools, reserved names, resources, policies.
- **runtime** (level 2): the environment served for real on 127.0.0.1 — start-up, `/health`,
  `/schema`, an episode, rewards, observations, state, tool modes, bad input, step timeouts,
  determinism, isolation, seed control, oracle containment.
- **semantic** (level 3, no model needed): oracle at the maximum, the floor gap, no solution
  leakage, verifier determinism, replay, the random-policy floor (a warning).

Each level includes the ones before it. Every check says how to fix what it found; see
docs/validation.md for the list.

Example:
    >>> report = validate("mcpgym.examples.guess:GuessEnv", level="static")
    >>> report.get("check_declared_tools").status
    'pass'
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mcpgym.manifest import Manifest
from mcpgym.validate import runtime, semantic, static
from mcpgym.validate.base import CHECKS, Check, Fail, NotApplicable, Skip
from mcpgym.validate.context import Context
from mcpgym.validate.gamers import checks as gamer_checks
from mcpgym.validate.report import (
    EXIT_BAD_MANIFEST,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SKIPPED,
    EXIT_VALIDATOR_ERROR,
    LEVELS,
    CheckResult,
    Level,
    Report,
)

__all__ = [
    "CHECKS",
    "EXIT_BAD_MANIFEST",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_SKIPPED",
    "EXIT_VALIDATOR_ERROR",
    "Check",
    "CheckResult",
    "Report",
    "planned",
    "validate",
]

_MODULES = (
    static,
    runtime,
    semantic,
    gamer_checks,
)  # importing them registers their checks, in this order


def _run_one(chk: Check, ctx: Context, report: Report) -> CheckResult:
    for need in chk.needs:
        prior = report.get(need)
        if prior is not None and prior.status in ("fail", "error", "skip"):
            return CheckResult(
                chk.name, chk.level, "skip", f"needs {need} ({prior.status})", severity=chk.severity
            )
    try:
        message = chk(ctx) or ""
    except Fail as exc:
        return CheckResult(
            chk.name, chk.level, "fail", exc.message, exc.fix, chk.severity, exc.details
        )
    except Skip as exc:
        return CheckResult(chk.name, chk.level, "skip", str(exc), severity=chk.severity)
    except NotApplicable as exc:
        return CheckResult(chk.name, chk.level, "n/a", str(exc), severity=chk.severity)
    except Exception as exc:
        return CheckResult(
            chk.name,
            chk.level,
            "error",
            f"{type(exc).__name__}: {exc}",
            "this is a validator fault: please report it",
            chk.severity,
        )
    details = dict(getattr(message, "details", {}))
    return CheckResult(
        chk.name, chk.level, "pass", str(message), severity=chk.severity, details=details
    )


def planned(level: Level = "semantic", only: list[str] | None = None) -> list[Check]:
    """The checks `validate(level=level, only=only)` runs, in their order."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    upto = LEVELS.index(level)
    return [
        chk
        for chk in sorted(CHECKS, key=lambda c: LEVELS.index(c.level))
        if LEVELS.index(chk.level) <= upto and (only is None or chk.name in only)
    ]


def validate(
    target: str | None = None,
    *,
    url: str | None = None,
    level: Level = "semantic",
    seed: int = 0,
    manifest: Manifest | None = None,
    only: list[str] | None = None,
    tasks: list[str] | None = None,
    gates: dict[str, float | None] | None = None,
    progress: Callable[[str, str | None], None] | None = None,
) -> Report:
    """Validate an environment and return the `Report` (never raises for environment faults).

    Args:
        target: a folder or manifest file, `MODULE:ATTR`, or an installed environment's name.
        url: validate a running server instead of serving `target` (runtime and semantic
            checks use it; `target` may still name the manifest).
        level: `static`, `runtime` or `semantic` (each includes the previous ones).
        seed: fixes every random choice the validator makes (canaries, random calls).
        manifest: use this manifest instead of reading one.
        only: run only these checks (their prerequisites are not run: they count as passed).
        tasks: play these task sets of the manifest (default every one not marked
            `validate: false`).
        gates: gamer-panel thresholds replacing the manifest's, `METRIC` or `GAMER.METRIC`
            (e.g. `{"success": 0.05, "positional.success": 0.2}`; None leaves one ungated).
        progress: called as `progress(check_name, None)` when a check begins and
            `progress(check_name, status)` when it ends (`mcpgym validate` draws it on stderr).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    ctx = Context(target, url=url, seed=seed, manifest=manifest, tasks=tasks, gates=gates)
    report = Report(target=ctx.label, level=level, bad_manifest=ctx.manifest_error is not None)
    upto = LEVELS.index(level)
    try:
        for chk in planned(level, only):
            if progress is not None:
                progress(chk.name, None)
            began = time.monotonic()
            result = _run_one(chk, ctx, report)
            report.add(result, time.monotonic() - began)
            if progress is not None:
                progress(chk.name, result.status)
        if upto > 0 and "specs" in ctx.cache:  # what the runtime and semantic checks played
            report.notes.append(ctx.tasks_note())
    finally:
        ctx.close()
    return report
