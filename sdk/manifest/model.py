"""The environment manifest, `mcpgym.yaml`: what an environment is and what it promises.

The manifest names the environment, its version and entry point, the modes and tools it serves,
its reward range, resources and timeouts, the oracle and null policies, the canaries the
validator plants and the task sets it plays. `manifest.schema.json` (JSON Schema Draft 2020-12,
shipped in this package, published in docs/validation.md) is the single definition: unknown keys
are rejected at every level, and each problem is reported with its path and how to fix it.

OpenEnv's `openenv.yaml` is read as well (`from_openenv`): its fields map onto a manifest.

Example:
    >>> m = parse_manifest({"manifest_version": 1, "name": "guess", "version": "1.0.0",
    ...                     "entry_point": "mcpgym.examples.guess:GuessEnv"})
    >>> m.name, m.modes
    ('guess', ['simulation', 'production'])
    >>> try:
    ...     parse_manifest({"manifest_version": 1, "name": "g", "version": "1.0.0",
    ...                     "entry_point": "m:E", "entrypoint": "m:E"})
    ... except ManifestError as exc:
    ...     print(exc.problems[0].fix)
    remove 'entrypoint' (did you mean 'entry_point'?)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcpgym.errors import MCPGymError
from mcpgym.manifest.panel import Panel
from mcpgym.manifest.problems import ManifestProblem, manifest_schema, schema_problems

__all__ = [
    "MANIFEST_NAMES",
    "Canary",
    "Manifest",
    "ManifestError",
    "ManifestProblem",
    "Panel",
    "TaskSet",
    "ToolDecl",
    "find_manifest",
    "from_openenv",
    "load_manifest",
    "manifest_schema",
    "parse_manifest",
]

MANIFEST_NAMES = ("mcpgym.yaml", "mcpgym.yml", "openenv.yaml")
"""File names a folder's manifest may have, in the order they are looked for."""

Mode = Literal["simulation", "production"]

CANARY_MARK = "{canary}"
"""Where a canary's `template` takes the planted answer."""


class ManifestError(MCPGymError, ValueError):
    """A manifest that cannot be read or does not fit the schema; `problems` lists every issue."""

    def __init__(self, source: str, problems: list[ManifestProblem]) -> None:
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{source}: invalid manifest\n{lines}")
        self.source = source
        self.problems = problems


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolDecl(_Model):
    """A declared tool: its name, the modes it is visible in, whether it answers/finishes."""

    name: str
    modes: list[Mode] = Field(default_factory=lambda: ["simulation", "production"])
    finishes: bool = False


class Reward(_Model):
    """The per-step reward range and how an episode's score is formed."""

    min: float
    max: float
    score: Literal["final", "sum"] = "final"
    margin: float | None = None

    @property
    def gap(self) -> float:
        """How far below `max` a degenerate policy must stay."""
        return self.margin if self.margin is not None else 0.1 * (self.max - self.min)


class Resources(_Model):
    cpu: float | None = None
    memory_mb: int | None = None
    max_sessions: int | None = None


class Timeouts(_Model):
    startup_s: float = 30.0
    reset_s: float = 10.0
    step_s: float = 10.0
    episode_s: float | None = None


class Episode(_Model):
    seeded: bool = True
    max_steps: int = 20


class Policies(_Model):
    oracle: str | None = None
    null: str | None = None


class CanaryCall(_Model):
    """A tool call the validator plays in a canary's episode (aimed where the answer could go)."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Canary(_Model):
    """A planted answer: a random value of `kind` passed as the reset option `option`."""

    option: str
    kind: Literal["string", "integer"]
    min: int | None = None
    max: int | None = None
    reset: dict[str, Any] = Field(default_factory=dict)
    template: Any = None
    calls: list[CanaryCall] = Field(default_factory=list)
    on_task: bool = True

    def planted(self, value: Any) -> Any:
        """The reset option's value with `value` planted: `template` with every `{canary}` in
        its strings replaced (a string that is just the mark takes `value` itself), or `value`."""
        if self.template is None:
            return value

        def fill(node: Any) -> Any:
            if isinstance(node, str):
                return value if node == CANARY_MARK else node.replace(CANARY_MARK, str(value))
            if isinstance(node, dict):
                return {k: fill(v) for k, v in node.items()}
            if isinstance(node, list):
                return [fill(v) for v in node]
            return node

        return fill(self.template)


class EpisodeDecl(_Model):
    id: str | None = None
    reset: dict[str, Any]
    prompt: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


class TaskSet(_Model):
    """Where episodes come from: a specs callable, inline episodes, or seeds."""

    source: Literal["specs", "episodes", "seeds"]
    specs: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    limit: int | None = None
    validate_: bool = Field(default=True, alias="validate")
    """`validate` in the file: whether `mcpgym validate` plays the set unless others are named."""
    episodes: list[EpisodeDecl] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)


class Manifest(_Model):
    """A validated manifest (see the module docstring); `root` is the folder it came from."""

    manifest_version: Literal[1] = 1
    name: str
    version: str
    description: str = ""
    entry_point: str
    modes: list[Mode] = Field(default_factory=lambda: ["simulation", "production"])
    tools: list[ToolDecl] | None = None
    reward: Reward | None = None
    resources: Resources | None = None
    timeouts: Timeouts = Field(default_factory=Timeouts)
    episode: Episode = Field(default_factory=Episode)
    policies: Policies = Field(default_factory=Policies)
    canaries: list[Canary] = Field(default_factory=list)
    tasks: dict[str, TaskSet] = Field(default_factory=dict)
    panel: Panel = Field(default_factory=Panel)
    openenv: dict[str, Any] | None = None
    root: str | None = None


def _consistency(m: Manifest) -> list[ManifestProblem]:
    """What the schema cannot say: ranges in order, tool modes among the served modes."""
    out: list[ManifestProblem] = []
    if m.reward is not None and not m.reward.min < m.reward.max:
        out.append(ManifestProblem("reward", "min must be below max", "set reward.min < max"))
    for i, t in enumerate(m.tools or []):
        extra = sorted(set(t.modes) - set(m.modes))
        if extra:
            out.append(
                ManifestProblem(
                    f"tools[{i}].modes", f"{extra} not in the top-level modes", "add it to modes"
                )
            )
    names = [t.name for t in m.tools or []]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        out.append(ManifestProblem("tools", f"{dup!r} is declared twice", "declare it once"))
    t = m.timeouts
    if t.episode_s is not None and t.episode_s < t.step_s:
        out.append(
            ManifestProblem("timeouts", "episode_s is below step_s", "raise timeouts.episode_s")
        )
    for i, c in enumerate(m.canaries):
        for j, made in enumerate(c.calls):
            if m.tools is not None and made.tool not in names:
                out.append(
                    ManifestProblem(
                        f"canaries[{i}].calls[{j}].tool",
                        f"{made.tool!r} is not a declared tool",
                        "call a tool listed under tools:",
                    )
                )
        if c.template is not None and CANARY_MARK not in json.dumps(c.template):
            out.append(
                ManifestProblem(
                    f"canaries[{i}].template",
                    f"the template has no {CANARY_MARK!r}: nothing would be planted",
                    f"put {CANARY_MARK!r} where the answer goes",
                )
            )
        if c.kind == "integer" and c.min is not None and c.max is not None and c.max - c.min < 1000:
            out.append(
                ManifestProblem(
                    f"canaries[{i}]", "the range is too small to plant a random value", "widen it"
                )
            )
    if m.tools is not None:
        named = [("panel.finish.tool", m.panel.finish.tool)] if m.panel.finish else []
        named += [(f"panel.lookups[{i}].tool", x.tool) for i, x in enumerate(m.panel.lookups)]
        named += [(f"panel.writes[{i}]", w) for i, w in enumerate(m.panel.writes)]
        for where, tool in named:
            if tool not in names:
                problem = f"{tool!r} is not a declared tool"
                out.append(ManifestProblem(where, problem, "name a tool listed under tools:"))
    return out


def parse_manifest(data: Any, *, source: str = "manifest", root: str | None = None) -> Manifest:
    """Validate `data` (a parsed YAML/JSON document) and return the `Manifest`.

    Raises `ManifestError` listing every problem, each with its path and fix.
    """
    problems = schema_problems(data)
    if problems:
        raise ManifestError(source, problems)
    manifest = Manifest.model_validate({**data, "root": root})
    problems = _consistency(manifest)
    if problems:
        raise ManifestError(source, problems)
    return manifest


def from_openenv(data: Any) -> dict[str, Any]:
    """An `openenv.yaml` document as an mcpgym manifest document (not yet validated).

    OpenEnv's file has `spec_version`, `name`, `type`, `runtime`, `app` (the ASGI app) and `port`;
    the name carries over, `app` becomes the entry point, the rest is kept under `openenv`.
    """
    if not isinstance(data, dict):
        return {"openenv": data}
    rest = {k: v for k, v in data.items() if k not in ("name", "version", "description")}
    out: dict[str, Any] = {
        "manifest_version": 1,
        "name": str(data.get("name", "")).replace("_", "-").lower(),
        "version": str(data.get("version", "0.0.0")),
        "entry_point": str(data.get("app", "")),
        "openenv": rest,
    }
    if "description" in data:
        out["description"] = data["description"]
    return out


def _null_keys(data: Any) -> Any:
    """YAML reads a bare `null:` key as None: make it the string "null" (policies.null)."""
    if isinstance(data, dict):
        return {("null" if k is None else k): _null_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_null_keys(v) for v in data]
    return data


def find_manifest(folder: str | Path) -> Path | None:
    """The manifest file of `folder` (`MANIFEST_NAMES`, first found), or `None`."""
    base = Path(folder)
    for name in MANIFEST_NAMES:
        if (base / name).is_file():
            return base / name
    return None


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate a manifest file (or the manifest of a folder).

    Raises `ManifestError` (unreadable, not YAML, or not fitting the schema).
    """
    import yaml

    p = Path(path)
    if p.is_dir():
        found = find_manifest(p)
        if found is None:
            names = ", ".join(MANIFEST_NAMES)
            raise ManifestError(
                str(p), [ManifestProblem("(file)", "no manifest", f"add one of {names}")]
            )
        p = found
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        problem = ManifestProblem("(file)", str(exc), "check the path")
        raise ManifestError(str(p), [problem]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f"line {where.line + 1}" if where is not None else "(file)"
        raise ManifestError(str(p), [ManifestProblem(at, str(exc), "fix the YAML")]) from None
    data = _null_keys(data)
    if p.name == "openenv.yaml":
        data = from_openenv(data)
    return parse_manifest(data, source=str(p), root=str(p.parent.resolve()))
