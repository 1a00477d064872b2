"""The environment manifest, `mcpgym.yaml`: what an environment is and what it promises.

`mcpgym.manifest.model` holds the model and its reader (`load_manifest`, `parse_manifest`,
`find_manifest`), `mcpgym.manifest.problems` the problems a manifest can have (and the shipped
JSON Schema), `mcpgym.manifest.openenv` the reader of OpenEnv's `openenv.yaml`,
`mcpgym.manifest.panel` the `panel:` section (what the validator's gamer panel needs),
`mcpgym.manifest.registry` the environments installed packages register and their manifests. Every
public name of the model is importable from here.

Example:
    >>> from mcpgym.manifest import MANIFEST_NAMES
    >>> MANIFEST_NAMES[0]
    'mcpgym.yaml'
"""

from mcpgym.manifest.model import (
    MANIFEST_NAMES,
    Canary,
    Manifest,
    ManifestError,
    ManifestProblem,
    Panel,
    TaskSet,
    ToolDecl,
    find_manifest,
    from_openenv,
    load_manifest,
    manifest_schema,
    parse_manifest,
)

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
