"""The package `mcpgym init` writes is found by name once installed: `mcpgym list` shows its
manifest, `validate NAME`, `serve NAME` and `eval --env NAME` take the registered name, and its
install command works from a checkout (the `mcpgym==X` pin cannot come from an index).

`pip install -e` of the scaffold is simulated: its project folder goes on the import path and
its entry point into the installed ones (the real install in a fresh venv is
tests/validate/test_init_venv.py, marked `venv`).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from mcpgym.manifest import registry
from mcpgym.servers.cli.init import install_command, scaffold, source_checkout
from mcpgym.servers.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`mcpgym init notesdemo`, as if `pip install -e` had run in its folder."""
    project = tmp_path / "notesdemo"
    scaffold("notesdemo", project)
    monkeypatch.setattr(sys, "path", [str(project), *sys.path])
    real = registry.entry_points

    def entry_points(**select: Any) -> Any:
        found = list(real(**select))
        if select.get("group") == registry.GROUP:
            found.append(EntryPoint("notesdemo", "notesdemo.env:NotesdemoEnv", registry.GROUP))
        return found

    monkeypatch.setattr(registry, "entry_points", entry_points)
    monkeypatch.chdir(tmp_path)  # not the project folder: the name alone must do
    return "notesdemo"


def test_the_manifest_of_an_editable_install_is_found_from_its_module(installed: str) -> None:
    path = registry.manifest_path_for("notesdemo.env:NotesdemoEnv")
    assert path is not None and path.name == "mcpgym.yaml" and path.parent.name == "notesdemo"


def test_list_shows_its_version_and_description(
    installed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[installed]["version"] == "0.1.0", rows[installed]
    assert rows[installed]["manifest_problem"] is None


def test_validate_takes_the_registered_name(
    installed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["validate", installed, "--level", "static"])
    out = capsys.readouterr().out
    assert "no manifest found" not in out
    assert "PASS  check_manifest" in out and "PASS  check_entry_point" in out, out
    assert code == 0, out


def test_serve_and_eval_take_the_registered_name(
    installed: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    main(["serve", installed, "--port", "0"])
    assert "mcpgym serve: NotesdemoEnv (simulation) at" in capsys.readouterr().err
    policy = "notesdemo.policies:oracle"
    assert main(["eval", "--env", installed, "--agent", policy, "--episodes", "2", "--quiet"]) == 0


def test_a_checkout_install_names_the_checkout_so_the_pin_resolves() -> None:
    # this test suite runs from a checkout: the install command must carry it
    assert source_checkout() == ROOT
    assert install_command() == f'pip install -e {ROOT} -e ".[dev]"'


def test_the_scaffold_readme_and_next_steps_carry_that_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "pinned"]) == 0
    out = capsys.readouterr().out
    assert install_command() in out and "activated venv" in out
    assert install_command() in (tmp_path / "pinned" / "README.md").read_text(encoding="utf-8")
