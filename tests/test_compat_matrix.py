"""docs/compatibility.md is generated from the tests marked with `helpers.compat` and is current;
the collector reads every mark, and refuses one it cannot read or that names no known direction
or verdict (so a cell cannot silently vanish from the page)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from helpers.compat import ORS_ENV, THEIR_ENV, Seam, compat

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "compat_matrix.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compat_matrix", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MATRIX = _script()


def test_the_page_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


def test_every_mark_in_the_tests_is_on_the_page() -> None:
    marked = 0
    for path in (ROOT / "tests").rglob("test_*.py"):
        marked += len(re.findall(r"^@compat\(", path.read_text(encoding="utf-8"), re.M))
    cells = MATRIX.collect()
    assert marked == len(cells) > 20
    page = (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8")
    for cell in cells:
        assert f"`{cell.test}`" in page
    for peer in ("OpenEnv", "Verifiers", "ORS", "TRL"):
        assert f"\n## {peer} — " in page, peer


def _collect(tmp_path: Path, body: str) -> list[object]:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_planted.py").write_text(body, encoding="utf-8")
    return MATRIX.collect(tests)


def test_a_mark_is_read_from_a_decorator_and_from_pytestmark(tmp_path: Path) -> None:
    cells = _collect(
        tmp_path,
        "import pytest\n"
        "pytestmark = [pytest.mark.ors, compat(ORS_ENV, 'c', 'lossy', 'w')]\n"
        "@compat(ORS_SERVER, client='c', verdict='works', what='a' 'b')\n"
        "def test_a(): pass\n"
        "def test_b(): pass\n"
        "def helper(): pass\n",
    )
    got = sorted((c.test.split("::")[1], c.direction, c.verdict, c.what, c.suite) for c in cells)  # type: ignore[attr-defined]
    assert got == [
        ("test_a", "mcpgym's client, against their server", "works", "ab", "just test-ors"),
        ("test_a", THEIR_ENV, "lossy", "w", "just test-ors"),
        ("test_b", THEIR_ENV, "lossy", "w", "just test-ors"),
    ]
    assert {(c.peer, c.version) for c in cells} == {("ORS", "ors-sdk 0.1.0")}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("mark", "says"),
    [
        ("compat(THEIR_ENV, 'c', 'works', 'w')", "Seam names"),
        ("compat(MY_SEAM, 'c', 'works', 'w')", "Seam names"),
        ("compat(ORS_ENV, 'c', 'fine', 'w')", "verdict"),
        ("compat(ORS_ENV, 'c', 'works', WHAT)", "literals"),
        ("compat(ORS_ENV, 'c', 'works')", "needs"),
        ("compat(ORS_ENV, '', 'works', 'w')", "non-empty"),
    ],
)
def test_an_unreadable_or_unknown_mark_is_refused(tmp_path: Path, mark: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        _collect(tmp_path, f"@{mark}\ndef test_x(): pass\n")


def test_the_helper_refuses_what_the_page_cannot_show() -> None:
    assert compat(ORS_ENV, "c", "works", "w").name == "compat"
    with pytest.raises(ValueError, match="verdict"):
        compat(ORS_ENV, "c", "maybe", "w")
    with pytest.raises(ValueError, match="direction"):
        compat(Seam("P", "1", "sideways"), "c", "works", "w")
