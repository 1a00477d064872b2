"""The layout is enforced by import-linter's contracts (pyproject.toml, `[tool.importlinter]`):
layers that imports point down, independent transports, no cycles at any depth. These tests run
the contracts on the real tree, prove that each kind of contract fails on a planted violation
(a circle, an upward import, one transport importing another), and check what the contracts
cannot say: the SDK imports no web framework, no folder outgrows what a person can hold, no
module outgrows 400 lines, and the architecture picture is drawn from today's code."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent))

# The SDK's modules: sdk/ except what setuptools maps into it from servers/ and harness/.
WEB_FRAMEWORKS = (
    "starlette",
    "uvicorn",
    "mcpgym.servers",
    "mcpgym.harness",
    "calendar_gym",
    "code_gym",
)


def _layout(tmp: Path) -> Path:
    """A symlink tree laid out as the installed package (what `scripts/layout_tree.sh` builds)."""
    pkg = tmp / "mcpgym"
    shutil.copytree(ROOT / "sdk", pkg, symlinks=False, copy_function=os.symlink)
    shutil.copytree(ROOT / "servers", pkg / "servers", copy_function=os.symlink)
    shutil.copytree(ROOT / "harness", pkg / "harness", copy_function=os.symlink)
    shutil.copytree(ROOT / "calendar_gym", tmp / "calendar_gym", copy_function=os.symlink)
    for extra in ("code_gym",):
        if (ROOT / extra).is_dir():
            shutil.copytree(ROOT / extra, tmp / extra, copy_function=os.symlink)
    return tmp


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    assert LINT, "lint-imports is not installed in this venv (the dev extra has import-linter)"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [LINT, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    return _lint(_layout(tmp_path_factory.mktemp("layout")))


def test_the_contracts_hold_on_the_tree(clean_run: subprocess.CompletedProcess[str]) -> None:
    assert clean_run.returncode == 0, clean_run.stdout[-4000:]
    assert "0 broken" in clean_run.stdout


PLANTS = {
    # a circle between two modules of one package: the acyclic contract
    "circle": (
        {
            "mcpgym/validate/_planted_a.py": "import mcpgym.validate._planted_b\n",
            "mcpgym/validate/_planted_b.py": "import mcpgym.validate._planted_a\n",
        },
        "No import cycles",
    ),
    # a circle through two folders, not two modules: still a cycle, one level up
    "folder circle": (
        {
            "calendar_gym/world/_planted.py": "import calendar_gym.tools.models\n",
            "calendar_gym/tools/_planted.py": "import calendar_gym.world._planted\n",
        },
        "calendar_gym.world is not allowed to import calendar_gym.tools",
    ),
    # an SDK client reaching up into the pool: the package layers
    "upward": (
        {"mcpgym/client/_planted.py": "from mcpgym.pool import EnvPool\n"},
        "mcpgym.client is not allowed to import mcpgym.pool",
    ),
    # one transport importing a sibling transport: the hosting layers
    "sibling transports": (
        {"mcpgym/servers/sim/_planted.py": "import mcpgym.servers.mcp.server\n"},
        "mcpgym.servers.sim is not allowed to import mcpgym.servers.mcp",
    ),
    # one environment importing the other: environments are independent of each other
    "environments": (
        {"calendar_gym/bench/_planted.py": "import code_gym.env\n"},
        "calendar_gym is not allowed to import code_gym",
    ),
    # Code Gym's sandbox reaching for the SDK (it runs where the SDK is not installed)
    "sandbox into sdk": (
        {"code_gym/sandbox/_planted.py": "import mcpgym.types\n"},
        "code_gym.sandbox is not allowed to import mcpgym",
    ),
    # the harness importing the flagship environment
    "harness into calendar": (
        {"mcpgym/harness/eval/_planted.py": "import calendar_gym.env\n"},
        "mcpgym.harness is not allowed to import calendar_gym",
    ),
}


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_a_planted_violation_breaks_a_contract(name: str, tmp_path: Path) -> None:
    files, expected = PLANTS[name]
    tree = _layout(tmp_path)
    for rel, text in files.items():
        (tree / rel).write_text(text)
    result = _lint(tree)
    assert result.returncode != 0, f"the contracts passed a planted {name}"
    broken = [line for line in result.stdout.splitlines() if line.rstrip().endswith("BROKEN")]
    assert broken, result.stdout[-3000:]
    # the contract that broke names the planted import (or, for a cycle, is the acyclic one)
    assert expected in result.stdout.split("Broken contracts", 1)[-1], result.stdout[-3000:]


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _web_imports(folder: Path) -> list[str]:
    bad: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        for lineno, name in _imports(path):
            if any(name == p or name.startswith(p + ".") for p in WEB_FRAMEWORKS):
                bad.append(f"{path.relative_to(folder)}:{lineno} imports {name}")
    return bad


def test_the_sdk_imports_no_web_framework() -> None:
    """DESIGN.md §2; import-linter's layers cannot name external packages per folder."""
    assert _web_imports(ROOT / "sdk") == []


def test_the_web_framework_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("from mcpgym.servers import create_app\nimport starlette\n")
    assert len(_web_imports(tmp_path)) == 2


SOURCE = ("sdk", "servers", "harness", "calendar_gym", "code_gym")
CODE = (*SOURCE, "bench", "scripts")
"""Every folder of code a person reads: the packages, the benchmarks and the scripts."""


def _folders() -> list[Path]:
    """Every folder under `CODE` that holds Python modules (a package or a folder of scripts)."""
    return [
        d
        for top in CODE
        if (ROOT / top).is_dir()
        for d in [ROOT / top, *sorted((ROOT / top).rglob("*"))]
        if d.is_dir() and "__pycache__" not in d.parts and any(d.glob("*.py"))
    ]


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    big = {
        str(d.relative_to(ROOT)): n
        for d in _folders()
        if (n := len([p for p in d.glob("*.py") if p.name != "__init__.py"])) > 15
    }
    assert big == {}, "split these folders by job"


def test_the_folder_check_sees_folders_of_scripts(tmp_path: Path) -> None:
    assert ROOT / "bench" in _folders() and ROOT / "bench" / "hostile" in _folders()


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for top in CODE
        if (ROOT / top).is_dir()
        for p in (ROOT / top).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}


def test_the_architecture_picture_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "architecture.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
