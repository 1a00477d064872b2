"""`mcpgym.manifest.openenv`: OpenEnv's `openenv.yaml`, read as OpenEnv writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgym.errors import InvalidRequest
from mcpgym.manifest.openenv import (
    find_openenv_manifest,
    parse_openenv_manifest,
    read_openenv_manifest,
)

# The shape of the file `openenv init` writes in 0.10.0 (its template's fields and values).
TEMPLATE = """\
spec_version: 1
name: echo_env
version: 0.1.0
type: space
runtime: fastapi
app: server.app:app
port: 8000
validation:
  reward:
    range: [0.0, 1.0]
  resources:
    cpu: 1.0
    memory_mb: 1024
  types:
    tags: [demo]
"""


def test_reads_the_template(tmp_path: Path) -> None:
    (tmp_path / "openenv.yaml").write_text(TEMPLATE)
    manifest = find_openenv_manifest(tmp_path)
    assert manifest is not None
    assert (manifest.spec_version, manifest.name, manifest.version) == (1, "echo_env", "0.1.0")
    assert (manifest.type, manifest.runtime, manifest.port) == ("space", "fastapi", 8000)
    assert manifest.entry_point == "server.app:app"
    assert manifest.validation["reward"]["range"] == [0.0, 1.0]
    assert read_openenv_manifest(tmp_path / "openenv.yaml") == manifest


def test_absent_manifest_is_none(tmp_path: Path) -> None:
    assert find_openenv_manifest(tmp_path) is None


def test_unknown_keys_are_kept_and_bare_versions_are_strings() -> None:
    manifest = parse_openenv_manifest("name: x\nversion: 1.0\naction: MyAction\nowner: me\n")
    assert manifest.version == "1.0" and manifest.action == "MyAction"
    assert manifest.extra == {"owner": "me"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("name: [unclosed", "not valid YAML"),
        ("- a\n- b\n", "mapping"),
        ("", "mapping"),
        ("version: 1\n", "name"),
        ("name: x\nport: eighty\n", "port"),
        ("name: x\nvalidation: [1]\n", "validation"),
        ("name: x\nspec_version: one\n", "spec_version"),
    ],
)
def test_bad_manifests_are_structured_errors(text: str, says: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_openenv_manifest(text)
    assert says in caught.value.message


def test_unreadable_path_is_a_structured_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidRequest, match="cannot read"):
        read_openenv_manifest(tmp_path / "missing.yaml")
