"""`mcpgym build` / `push` / `providers gc` command lines: bad input is a clear error (exit 2, no
traceback), before any engine is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpgym.servers.cli.main import build_parser, main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["build", "no_such_module_xyz:Env"], "cannot find module"),
        (["build", "./no/such/folder"], "not MODULE:ATTR and not a folder"),
        (["build", "mcpgym.examples.guess:GuessEnv", "--option", "novalue"], "KEY=VALUE"),
        (["build", "mcpgym.examples.guess:GuessEnv", "--option", "=x"], "KEY=VALUE"),
        (["build", "mcpgym.examples.guess:GuessEnv", "--option=--x=1"], "KEY=VALUE"),
        (
            ["push", "img:1", "--registry", "127.0.0.1:1", "--engine", "unix:///nonexistent.sock"],
            "no container engine",
        ),
    ],
)
def test_bad_input_is_a_clear_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_project_folder_without_env_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')
    assert main(["build", str(tmp_path)]) == 2
    assert "[tool.mcpgym] env" in capsys.readouterr().err


def test_commands_are_registered_with_help() -> None:
    parser = build_parser()
    for argv in (["build", "m:A"], ["push", "i", "--registry", "h:1"], ["providers", "gc"]):
        args = parser.parse_args(argv)
        assert callable(args.func)
    with pytest.raises(SystemExit):
        parser.parse_args(["providers"])  # a subcommand is required
