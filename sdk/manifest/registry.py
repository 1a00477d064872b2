"""The environments installed packages register, and importing what a user names.

A package registers its environment class under a short name:

    [project.entry-points."mcpgym.environments"]
    calendar = "calendar_gym:CalendarEnv"

`list_environments()` (and `mcpgym list`) shows them with their manifests (`manifest_path_for`
finds a target's manifest); `resolve_target` turns a name into `MODULE:ATTR`, and `import_target`
(mcpgym.targets: the current folder first on the import path) imports it. Starting one is
`mcpgym.discovery.from_env`'s job; this module only knows names.

Example:
    >>> "guess" in [e.name for e in list_environments()]
    True
    >>> resolve_target("guess")
    'mcpgym.examples.guess:GuessEnv'
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from mcpgym.manifest import Manifest, ManifestError, find_manifest, load_manifest
from mcpgym.targets import import_target  # the one rule every command imports targets by

__all__ = [
    "GROUP",
    "EnvironmentInfo",
    "environment_entry",
    "import_target",
    "list_environments",
    "manifest_path_for",
    "resolve_target",
]

GROUP = "mcpgym.environments"


@dataclass(frozen=True)
class EnvironmentInfo:
    """One installed environment: its name, entry point and manifest (if it has a valid one)."""

    name: str
    entry_point: str
    manifest: Manifest | None = None
    manifest_problem: str | None = None

    @property
    def version(self) -> str:
        return self.manifest.version if self.manifest else "?"

    @property
    def description(self) -> str:
        return self.manifest.description if self.manifest else ""


def environment_entry(name: str) -> str | None:
    """`MODULE:ATTR` of the installed environment `name`, or `None`."""
    for ep in entry_points(group=GROUP):
        if ep.name == name:
            return ep.value
    return None


def _manifest_of(target: str) -> tuple[Manifest | None, str | None]:
    try:
        import_target(target)
    except ValueError as exc:
        return None, f"cannot import: {exc}"
    path = manifest_path_for(target)
    if path is None:
        return None, "no manifest"
    try:
        return load_manifest(path), None
    except ManifestError as exc:
        return None, str(exc)


def manifest_path_for(target: str) -> Path | None:
    """The manifest describing `MODULE:ATTR`, found from its imported module, or `None`.

    Looked for, in order: `<module>.mcpgym.yaml` beside the module; the manifest of the module's
    folder (a package shipping its manifest as package data, like Calendar Gym); the manifest of
    the folder holding the top-level package, when its `entry_point` is this target (the project
    folder `mcpgym init` writes, installed with `pip install -e`).
    """
    module_name = target.partition(":")[0]
    try:
        module = importlib.import_module(module_name)
    except Exception:
        return None
    file = getattr(module, "__file__", None)
    if not file:
        return None
    here = Path(file).resolve().parent
    own = here / f"{Path(file).stem}.mcpgym.yaml"
    if own.is_file():
        return own
    found = find_manifest(here)
    if found is not None or ("." not in module_name and Path(file).stem != "__init__"):
        return found  # a top-level module: its folder is the project folder
    top = sys.modules.get(module_name.split(".")[0])
    paths = list(getattr(top, "__path__", []))
    if not paths:
        return None
    project = find_manifest(Path(paths[0]).resolve().parent)
    if project is None:
        return None
    try:
        entry = load_manifest(project).entry_point
    except ManifestError:
        return None
    return project if entry == target else None


def list_environments() -> list[EnvironmentInfo]:
    """Every environment installed packages register, by name."""
    out = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        manifest, problem = _manifest_of(ep.value)
        out.append(EnvironmentInfo(ep.name, ep.value, manifest, problem))
    return out


def resolve_target(name: str) -> str:
    """`name` as `MODULE:ATTR`: itself when it has a colon, else the installed entry point.

    Raises `ValueError` naming the installed environments when there is none by that name.
    """
    if ":" in name:
        return name
    found = environment_entry(name)
    if found is None:
        known = ", ".join(e.name for e in entry_points(group=GROUP)) or "none"
        raise ValueError(f"no installed environment {name!r} (installed: {known})")
    return found
