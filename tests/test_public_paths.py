"""Every import path the README and docs/ show keeps working, whatever moves inside the folders.

Read from the pages as a reader copies them: the imports of their Python blocks, every
`MODULE:ATTR` they name (entry points, `--tasks`, `serve` targets), every `python -m MODULE`; plus
the paths the project promises by name, the console script and every entry point it registers.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOPS = ("mcpgym", "calendar_gym", "code_gym")

PROMISED = [
    "mcpgym:MCPEnvironment",
    "mcpgym:tool",
    "mcpgym:from_env",
    "mcpgym.providers.docker:DockerProvider",
    "mcpgym.pool:EnvPool",
    "mcpgym.integrations.trl:environment_factory",
    "mcpgym.servers:create_app",
    "mcpgym.servers.cli:main",
    "mcpgym.rubrics:LLMJudge",
    "mcpgym.manifest:load_manifest",
    "mcpgym.tasks:from_dataset",
    "calendar_gym:CalendarEnv",
    "calendar_gym.suite:specs",
    "calendar_gym.agents:oracle",
]

_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w ,]+))"
    r"|import[ \t]+([\w.]+))",
    re.M,
)
_TOPS = "|".join(TOPS)
_TARGET = re.compile(rf"\b((?:{_TOPS})(?:\.\w+)*):([A-Za-z_][\w.]*)")
_RUN_MODULE = re.compile(rf"python3? -m ((?:{_TOPS})(?:\.\w+)*)")
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _documented() -> set[str]:
    found: set[str] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in _BLOCK.findall(text):
            for module, grouped, names, plain in _IMPORT.findall(block):
                mod = module or plain
                if mod.split(".")[0] not in TOPS:
                    continue
                if plain:
                    found.add(mod)
                for item in (grouped or names).split(","):
                    name = item.split(" as ")[0].strip()
                    if name and not name.startswith("#"):
                        found.add(f"{mod}:{name}")
        found.update(f"{m}:{a}" for m, a in _TARGET.findall(text))
        found.update(_RUN_MODULE.findall(text))
    return found


def _resolve(path: str) -> object:
    module, _, attr = path.partition(":")
    obj: object = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


DOCUMENTED = sorted(_documented() | set(PROMISED))


def test_the_pages_name_paths() -> None:
    assert len(DOCUMENTED) > 40  # the reader actually sees paths; a broken parser finds none


@pytest.mark.parametrize("path", DOCUMENTED)
def test_a_documented_path_imports(path: str) -> None:
    top = path.split(":")[0].split(".")[0]
    if top == "code_gym" and importlib.util.find_spec("code_gym") is None:
        pytest.skip("code_gym is not installed here")
    try:
        _resolve(path)
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] not in TOPS:  # an optional extra (docker, trl...)
            pytest.skip(f"needs {exc.name}")
        raise


@pytest.mark.parametrize(
    "group", ["mcpgym.commands", "mcpgym.agents", "mcpgym.environments", "console_scripts"]
)
def test_every_entry_point_loads(group: str) -> None:
    eps = [ep for ep in entry_points(group=group) if ep.value.split(".")[0].split(":")[0] in TOPS]
    assert eps, group
    for ep in eps:
        assert ep.load() is not None, ep


def test_the_console_script_and_module_run() -> None:
    for argv in (["-m", "mcpgym.servers", "--help"], ["-m", "mcpgym.servers.cli", "--help"]):
        result = subprocess.run(
            [sys.executable, *argv], capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
        assert "serve" in result.stdout
