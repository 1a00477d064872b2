"""Read OpenEnv's `openenv.yaml` manifest, where an environment package has one.

OpenEnv 0.10.0 packages describe themselves in `openenv.yaml`: `spec_version` (1), `name`,
`version`, `type` (`space`), `runtime` (`fastapi`), `app` (the ASGI app, `server.app:app`),
`port` (8000), optionally `description` and the `action` / `observation` class names, and a
`validation:` block (reward range, resources, capabilities, types, judge, …) that is kept as
it is. Unknown top-level keys are kept too (`extra`), so nothing in the file is lost.

`mcpgym.manifest` (the full `mcpgym.yaml`) builds on this reader.

Example:
    >>> m = parse_openenv_manifest("spec_version: 1\\nname: echo_env\\napp: server.app:app\\n")
    >>> (m.name, m.app, m.port, m.entry_point)
    ('echo_env', 'server.app:app', 8000, 'server.app:app')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpgym.errors import InvalidRequest

__all__ = [
    "OPENENV_MANIFEST",
    "OpenEnvManifest",
    "find_openenv_manifest",
    "parse_openenv_manifest",
    "read_openenv_manifest",
]

OPENENV_MANIFEST = "openenv.yaml"
"""The file name OpenEnv looks for at a package's root."""


class OpenEnvManifest(BaseModel):
    """The fields of an `openenv.yaml` (see the module docstring for what each means)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    spec_version: int | None = None
    name: str
    version: str | None = None
    description: str | None = None
    type: str | None = None
    runtime: str | None = None
    app: str | None = None
    port: int = 8000
    action: str | None = None
    observation: str | None = None
    validation: dict[str, Any] = Field(default_factory=dict)

    @property
    def entry_point(self) -> str | None:
        """`MODULE:ATTR` of the served app, as `mcpgym serve` and providers take it."""
        return self.app

    @property
    def extra(self) -> dict[str, Any]:
        """Top-level keys this model does not name, as they were in the file."""
        return dict(self.model_extra or {})


def parse_openenv_manifest(text: str, *, source: str = OPENENV_MANIFEST) -> OpenEnvManifest:
    """Parse the text of an `openenv.yaml`.

    Raises `InvalidRequest` (`errors` lists each problem with its field) when the text is not
    YAML, not a mapping, or its fields have the wrong types.
    """
    import yaml  # the parser is only needed when a manifest is read

    try:
        data: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidRequest(f"{source} is not valid YAML: {exc}", source=source) from None
    if not isinstance(data, dict):
        raise InvalidRequest(f"{source} must be a YAML mapping", source=source)
    # version numbers are often written bare (`version: 1.0`): YAML reads those as numbers
    fields: dict[str, Any] = {str(k): v for k, v in data.items()}  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(fields.get("version"), int | float) and not isinstance(fields["version"], bool):
        fields["version"] = str(fields["version"])
    try:
        return OpenEnvManifest.model_validate(fields)
    except ValidationError as exc:
        errors = [
            {"field": ".".join(map(str, e["loc"])) or "manifest", "problem": e["msg"]}
            for e in exc.errors()
        ]
        first = errors[0]
        raise InvalidRequest(
            f"{source}: {first['field']}: {first['problem']}", source=source, errors=errors
        ) from None


def read_openenv_manifest(path: str | Path) -> OpenEnvManifest:
    """Read an `openenv.yaml` file (or the one in directory `path`)."""
    file = Path(path)
    if file.is_dir():
        file = file / OPENENV_MANIFEST
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidRequest(f"cannot read {file}: {exc.strerror}", source=str(file)) from None
    return parse_openenv_manifest(text, source=str(file))


def find_openenv_manifest(root: str | Path) -> OpenEnvManifest | None:
    """The manifest at `root/openenv.yaml`, or `None` when the package has none."""
    file = Path(root) / OPENENV_MANIFEST
    return read_openenv_manifest(file) if file.is_file() else None
