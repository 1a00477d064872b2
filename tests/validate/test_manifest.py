"""The manifest schema: Draft 2020-12, unknown keys rejected at every level, linked fields,
messages that name the path and the fix; YAML and openenv.yaml reading."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcpgym.manifest import (
    ManifestError,
    from_openenv,
    load_manifest,
    manifest_schema,
    parse_manifest,
)

FULL: dict[str, Any] = {
    "manifest_version": 1,
    "name": "demo",
    "version": "1.2.3",
    "description": "d",
    "entry_point": "demo.env:DemoEnv",
    "modes": ["simulation", "production"],
    "tools": [{"name": "a", "modes": ["simulation"], "finishes": True}],
    "reward": {"min": 0, "max": 1, "score": "final", "margin": 0.2},
    "resources": {"cpu": 1, "memory_mb": 256, "max_sessions": 8},
    "timeouts": {"startup_s": 10, "reset_s": 1, "step_s": 1, "episode_s": 30},
    "episode": {"seeded": True, "max_steps": 5},
    "policies": {"oracle": "demo.p:oracle", "null": "builtin:idle"},
    "canaries": [
        {"option": "code", "kind": "integer", "min": 0, "max": 100000, "reset": {}},
        {
            "option": "world",
            "kind": "string",
            "on_task": False,
            "template": {"rows": [{"name": "{canary}", "note": "x {canary} y"}], "n": 1},
            "calls": [{"tool": "a", "arguments": {"q": 1}}],
        },
    ],
    "tasks": {
        "a": {"source": "seeds", "seeds": [1]},
        "b": {
            "source": "episodes",
            "episodes": [{"id": "x", "reset": {}, "prompt": "p", "data": {}}],
        },
        "c": {"source": "specs", "specs": "demo.t:specs", "args": {}, "limit": 3},
        "old": {"source": "seeds", "seeds": [7], "validate": False},
    },
}


def _objects(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to an object the schema closes (free-form option objects excluded)."""
    out = []
    if isinstance(data, dict):
        free = (("reset",), ("args",), ("data",), ("tasks",), ("arguments",))
        if path[-1:] not in free and "template" not in path:
            out.append(path)
        for k, v in data.items():
            out += _objects(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _objects(v, (*path, i))
    return out


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        data = data[p]
    return data


def test_the_schema_is_draft_2020_12() -> None:
    schema = manifest_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_a_full_manifest_parses() -> None:
    m = parse_manifest(FULL)
    assert m.reward is not None and m.reward.gap == 0.2
    assert m.tools is not None and m.tools[0].finishes
    assert [ts.validate_ for ts in m.tasks.values()] == [True, True, True, False]
    assert m.canaries[0].on_task and not m.canaries[1].on_task


def test_a_canary_is_planted_into_its_template() -> None:
    code, world = parse_manifest(FULL).canaries
    assert code.planted(12345) == 12345  # no template: the value is the option
    assert world.planted(7) == {"rows": [{"name": 7, "note": "x 7 y"}], "n": 1}
    assert world.planted("zq1") == {"rows": [{"name": "zq1", "note": "x zq1 y"}], "n": 1}
    assert world.calls[0].tool == "a" and world.calls[0].arguments == {"q": 1}


@pytest.mark.parametrize("path", _objects(FULL), ids=lambda p: ".".join(map(str, p)) or "top")
def test_an_unknown_key_is_rejected_at_every_level(path: tuple[Any, ...]) -> None:
    data = copy.deepcopy(FULL)
    _at(data, path)["zzz_unknown"] = 1
    with pytest.raises(ManifestError) as info:
        parse_manifest(data)
    (problem,) = info.value.problems
    assert "zzz_unknown" in problem.message and "remove 'zzz_unknown'" in problem.fix
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
    assert problem.path == (where or "(top level)")


@pytest.mark.parametrize(
    ("key", "typo", "near"),
    [
        ((), "entry_piont", "entry_point"),
        (("reward",), "maxx", "max"),
        (("timeouts",), "step", "step_s"),
        (("policies",), "oracel", "oracle"),
    ],
)
def test_a_misspelt_key_gets_a_did_you_mean(key: tuple[str, ...], typo: str, near: str) -> None:
    data = copy.deepcopy(FULL)
    target = _at(data, key)
    target[typo] = target.pop(near) if near in target else 1
    with pytest.raises(ManifestError) as info:
        parse_manifest(data)
    assert any(f"did you mean {near!r}" in p.fix for p in info.value.problems)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"name": "Bad Name"}, "name"),
        ({"version": "one"}, "version"),
        ({"entry_point": "no-colon"}, "entry_point"),
        ({"modes": ["simulaton"]}, "modes[0]"),
        ({"reward": {"min": 1, "max": 0}}, "reward"),
        ({"reward": {"min": 0}}, "reward"),
        (
            {"tools": [{"name": "a", "modes": ["production"]}], "modes": ["simulation"]},
            "tools[0].modes",
        ),
        ({"tools": [{"name": "a"}, {"name": "a"}]}, "tools"),
        ({"canaries": [{"option": "x", "kind": "integer"}]}, "canaries[0]"),
        ({"canaries": [{"option": "x", "kind": "string", "min": 1}]}, "canaries[0]"),
        ({"tasks": {"a": {"source": "seeds"}}}, "tasks.a"),
        ({"tasks": {"a": {"source": "seeds", "seeds": [1], "specs": "m:f"}}}, "tasks.a"),
        ({"tasks": {"a": {"source": "specs"}}}, "tasks.a"),
        ({"policies": {"oracle": "not a path"}}, "policies.oracle"),
        ({"timeouts": {"step_s": 0}}, "timeouts.step_s"),
        ({"manifest_version": 2}, "manifest_version"),
        (
            {"canaries": [{"option": "x", "kind": "string", "template": {"a": 1}}]},
            "canaries[0].template",
        ),
        (
            {"canaries": [{"option": "x", "kind": "string", "calls": [{"tool": "zz"}]}]},
            "canaries[0].calls[0].tool",
        ),
        ({"canaries": [{"option": "x", "kind": "string", "calls": [{}]}]}, "canaries[0].calls[0]"),
        ({"canaries": [{"option": "x", "kind": "string", "on_task": "no"}]}, "canaries[0].on_task"),
        ({"tasks": {"a": {"source": "seeds", "seeds": [1], "validate": 1}}}, "tasks.a.validate"),
    ],
)
def test_every_problem_names_its_path_and_a_fix(change: dict[str, Any], path: str) -> None:
    data = {**copy.deepcopy(FULL), **change}
    with pytest.raises(ManifestError) as info:
        parse_manifest(data)
    assert any(p.path == path and p.fix for p in info.value.problems), info.value.problems


def test_tasks_need_a_reward_range() -> None:
    data = copy.deepcopy(FULL)
    del data["reward"]
    with pytest.raises(ManifestError, match="reward"):
        parse_manifest(data)


def test_yaml_files(tmp_path: Path) -> None:
    (tmp_path / "mcpgym.yaml").write_text(
        "manifest_version: 1\nname: demo\nversion: 1.0.0\nentry_point: m:E\n"
        "policies:\n  null: m:idle\n"
    )
    m = load_manifest(tmp_path)
    assert m.policies.null == "m:idle" and m.root == str(tmp_path.resolve())
    (tmp_path / "mcpgym.yaml").write_text("name: [unclosed\n")
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "mcpgym.yaml")
    assert info.value.problems[0].path.startswith("line")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ManifestError, match="no manifest"):
        load_manifest(tmp_path / "empty")
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "missing.yaml")
    assert info.value.problems[0].fix == "check the path"
    (tmp_path / "mcpgym.yaml").write_text("- a list\n")
    with pytest.raises(ManifestError, match="not of type 'object'"):
        load_manifest(tmp_path)


def test_openenv_yaml_is_read(tmp_path: Path) -> None:
    (tmp_path / "openenv.yaml").write_text(
        "spec_version: 1\nname: echo_env\ntype: space\nruntime: fastapi\n"
        "app: server.app:app\nport: 8000\n"
    )
    m = load_manifest(tmp_path)
    assert (m.name, m.entry_point) == ("echo-env", "server.app:app")
    assert m.openenv == {
        "spec_version": 1,
        "type": "space",
        "runtime": "fastapi",
        "app": "server.app:app",
        "port": 8000,
    }
    assert from_openenv([1]) == {"openenv": [1]}
