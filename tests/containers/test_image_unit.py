"""The build context without an engine: Dockerfile shape, requirements, targets (default suite)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpgym.providers.base import ProviderError
from mcpgym.providers.image import (
    BuildSpec,
    default_tag,
    make_context,
    render_dockerfile,
    requirements_of,
)

METADATA = """Metadata-Version: 2.1
Name: demo
Version: 1.0
Requires-Dist: pydantic<3,>=2.12
Requires-Dist: python-dateutil>=2.9; extra == "calendar"
Requires-Dist: uvloop>=0.21; sys_platform != "win32" and extra == "dev"
Requires-Dist: colorama; sys_platform == "win32"
Requires-Dist: docker>=7; extra == 'docker'
"""


def test_requirements_keep_only_requested_extras_and_their_platform_markers() -> None:
    assert requirements_of(METADATA, ()) == [
        "pydantic<3,>=2.12",
        'colorama; sys_platform == "win32"',
    ]
    assert requirements_of(METADATA, ("calendar", "dev", "Docker")) == [
        "pydantic<3,>=2.12",
        "python-dateutil>=2.9",
        'uvloop>=0.21; sys_platform != "win32"',
        'colorama; sys_platform == "win32"',
        "docker>=7",
    ]


def _lines(dockerfile: str) -> list[str]:
    return dockerfile.splitlines()


def test_dockerfile_copies_the_virtualenv_once_runs_as_a_user_and_execs_serve() -> None:
    spec = BuildSpec(
        target="pkg.env:Env",
        base="img:1",
        mode="production",
        options={"max-sessions": "7", "idle-timeout": "30"},
    )
    lines = _lines(render_dockerfile(spec, wheels=["a-1-py3-none-any.whl"]))
    final = lines[[i for i, line in enumerate(lines) if line.startswith("FROM ")][1] :]
    assert lines[0] == "FROM img:1 AS build" and final[0] == "FROM img:1"
    assert [line for line in final if "/opt/venv" in line and line.startswith(("COPY", "RUN"))] == [
        "COPY --from=build /opt/venv /opt/venv"
    ]
    assert "USER 10001:10001" in final
    cmd = json.loads(next(line for line in final if line.startswith("CMD "))[4:])
    assert cmd == [
        "/opt/venv/bin/mcpgym",
        "serve",
        "pkg.env:Env",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        "--mode",
        "production",
        "--max-sessions",
        "7",
        "--idle-timeout",
        "30",
    ]
    health = next(line for line in final if line.startswith("HEALTHCHECK"))
    assert "/health" in health and json.loads(health.split(" CMD ", 1)[1])[0].startswith("/opt")
    label = next(line for line in final if line.startswith("LABEL "))
    assert 'io.mcpgym.mode="production"' in label and 'io.mcpgym.target="pkg.env:Env"' in label


@pytest.mark.parametrize("hostile", ['a"b', "x\ny", "$(rm -rf /)", "a b", "'; echo"])
def test_option_values_cannot_break_out_of_cmd_or_labels(hostile: str) -> None:
    spec = BuildSpec(target="m:E", options={"token": hostile})
    lines = _lines(render_dockerfile(spec, wheels=[]))
    cmd = json.loads(next(line for line in lines if line.startswith("CMD "))[4:])
    assert cmd[-2:] == ["--token", hostile]  # one argv entry, never a shell string
    assert len([line for line in lines if line.startswith("LABEL ")]) == 1


def test_context_for_a_module_in_mcpgym_ships_the_mcpgym_wheel(tmp_path: Path) -> None:
    spec = make_context(
        BuildSpec(target="mcpgym.examples.guess:GuessEnv", extras=("calendar",)), tmp_path
    )
    assert spec.target == "mcpgym.examples.guess:GuessEnv"
    wheels = [p.name for p in (tmp_path / "wheels").iterdir()]
    assert len(wheels) == 1 and wheels[0].startswith("mcpgym-")
    reqs = (tmp_path / "requirements.txt").read_text().split()
    assert any(r.replace(" ", "").startswith("mcp") and "2.0.0" in r for r in reqs), reqs
    assert "python-dateutil>=2.9" in reqs
    assert not any(r.startswith("mcpgym") for r in reqs)
    assert not (tmp_path / "app").exists()


def test_context_for_a_local_module_copies_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "my_local_env.py").write_text("from mcpgym.examples.guess import GuessEnv as Env\n")
    monkeypatch.syspath_prepend(str(src))
    ctx = tmp_path / "ctx"
    make_context(BuildSpec(target="my_local_env:Env"), ctx)
    assert (ctx / "app" / "my_local_env.py").is_file()
    assert "COPY app /opt/app" in (ctx / "Dockerfile").read_text()


@pytest.mark.parametrize("bad", ["no_such_module_xyz:Env", "no_such_module_xyz.sub:Env"])
def test_unknown_module_is_a_clear_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ProviderError, match="cannot find module"):
        make_context(BuildSpec(target=bad), tmp_path)


def test_project_without_env_name_says_how_to_fix(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')
    with pytest.raises(ProviderError, match=r"\[tool.mcpgym\] env"):
        make_context(BuildSpec(path=tmp_path), tmp_path / "ctx")


def test_default_tag() -> None:
    assert default_tag("calendar_gym:CalendarEnv") == "mcpgym-calendar-gym:latest"


def test_a_module_in_the_current_folder_is_found_as_serve_finds_it(tmp_path: Path) -> None:
    """`mcpgym build drawers:Drawers` run from the folder holding drawers.py (issue 29: one
    import rule for every command). `-P` keeps the current folder off `sys.path`, as a console
    script's is; the context is built to the point of copying the module."""
    (tmp_path / "drawers_here.py").write_text("from mcpgym.examples.guess import GuessEnv\n")
    probe = (
        "import sys, os; from mcpgym.providers.image import _module_files\n"
        "assert os.getcwd() not in sys.path and '' not in sys.path\n"
        "print(_module_files('drawers_here'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert str(tmp_path / "drawers_here.py") in done.stdout


def _no_pip(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a)
    )


def test_a_venv_without_pip_builds_with_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`uv venv` makes environments without pip; `mcpgym build` then builds wheels with uv."""
    import shutil

    from mcpgym.providers.image import _build_wheel

    if shutil.which("uv") is None:
        pytest.skip("uv is not on PATH")
    project = tmp_path / "proj"
    (project / "proj_pkg").mkdir(parents=True)
    (project / "proj_pkg" / "__init__.py").write_text("")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "proj-pkg"\nversion = "0.1"\n'
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    _no_pip(monkeypatch)
    wheel = _build_wheel(project, tmp_path / "out")
    assert wheel.name.startswith("proj_pkg-0.1-") and wheel.suffix == ".whl"


def test_neither_pip_nor_uv_is_one_line_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from mcpgym.providers.image import _build_wheel

    _no_pip(monkeypatch)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    with pytest.raises(ProviderError, match=r"neither pip nor uv; fix: python -m ensurepip"):
        _build_wheel(tmp_path, tmp_path / "out")
