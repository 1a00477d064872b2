"""Manifest problems: where, what and the fix, and JSON Schema errors turned into them.

`manifest_schema()` is the shipped `manifest.schema.json`; `schema_problems(data)` validates a
document against it and words each error with its path and a fix (a near key for a typo, the
allowed values for an enum).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["ManifestProblem", "manifest_schema", "schema_problems"]


@dataclass(frozen=True, slots=True)
class ManifestProblem:
    """One thing wrong with a manifest: where (`path`, e.g. `tools[2].modes`), what, and the fix."""

    path: str
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message} (fix: {self.fix})"


@cache
def manifest_schema() -> dict[str, Any]:
    """The manifest's JSON Schema (Draft 2020-12), as shipped in the package."""
    text = resources.files("mcpgym").joinpath("manifest.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def _path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def schema_problems(data: Any) -> list[ManifestProblem]:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(manifest_schema())
    found: list[ManifestProblem] = []
    for err in sorted(
        validator.iter_errors(data), key=lambda e: (list(e.absolute_path), e.message)
    ):
        found.extend(_explain(err))
    return found


def _explain(err: Any) -> list[ManifestProblem]:
    where = _path(err.absolute_path)
    schema = err.schema if isinstance(err.schema, dict) else {}
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        known = sorted(schema.get("properties", {}))
        out = []
        for key in sorted({str(k) for k in err.instance} - set(known)):
            near = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else f"; known keys: {', '.join(known)}"
            out.append(ManifestProblem(where, f"unknown key {key!r}", f"remove {key!r}{hint}"))
        return out
    if err.validator == "required":
        return [ManifestProblem(where, err.message, "add the missing key")]
    if err.validator == "enum":
        allowed = ", ".join(repr(v) for v in err.validator_value)
        near = difflib.get_close_matches(
            str(err.instance), [str(v) for v in err.validator_value], 1
        )
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return [
            ManifestProblem(
                where, f"{err.instance!r} is not allowed", f"use one of {allowed}{hint}"
            )
        ]
    if err.validator == "pattern":
        desc = schema.get("description", f"match {err.validator_value}")
        return [ManifestProblem(where, f"{err.instance!r} has the wrong form", desc)]
    if err.validator == "type":
        return [ManifestProblem(where, err.message, f"give a {err.validator_value}")]
    if err.validator == "not" and "kind" in str(err.schema):
        return [ManifestProblem(where, "min/max only apply to integer canaries", "remove them")]
    if err.validator == "not":
        return [ManifestProblem(where, "keys of another source are set", "keep one source's keys")]
    return [ManifestProblem(where, err.message, "see the manifest schema in docs/validation.md")]
