"""Without the `[calendar]` extra, Calendar Gym fails with one line naming the extra, and
`mcpgym eval --agent naive` (an agent calendar_gym provides) says so instead of a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

# `sys.modules[name] = None` makes `import name` fail, as on an install without the extra.
NO_DATEUTIL = "import sys; sys.modules['dateutil'] = None; "
EXTRA = "calendar_gym needs the [calendar] extra: pip install 'mcpgym[calendar]'"


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", NO_DATEUTIL + code], capture_output=True, text=True, timeout=120
    )


def test_import_names_the_extra() -> None:
    out = _run("import calendar_gym")
    assert out.returncode == 1 and out.stderr.strip().splitlines()[-1].endswith(EXTRA)


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--env", "mcpgym.examples.guess:GuessEnv", "--agent", "naive", "--episodes", "1"],
        ["eval", "--env", "calendar_gym:CalendarEnv", "--agent", "random", "--episodes", "1"],
        ["serve", "calendar_gym:CalendarEnv", "--port", "0"],
    ],
)
def test_commands_print_one_line(argv: list[str]) -> None:
    out = _run(f"from mcpgym.servers.cli.main import main; sys.exit(main({argv!r}))")
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpgym ") and EXTRA in lines[0]
