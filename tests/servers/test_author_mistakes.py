"""Every command x every classic author mistake: one line naming the file and the fix, a
documented exit code (`mcpgym --help`'s epilog), and no traceback unless `--debug`.

In process (`main([...])`) for speed: each mistake is a throwaway module written to a fresh
folder that becomes the current folder, so the import rule under test (the current folder comes
first, as for `python -m`) is the one a user meets. The real subprocesses (a server's log, Ctrl-C,
a closed stdout, a taken port) are in test_author_mistakes_live.py.
"""

from __future__ import annotations

import itertools
import sys
import textwrap
from pathlib import Path

import pytest

from mcpgym.servers.cli.main import main

_ids = itertools.count()

# name -> (module text, class); each text is a whole module an author could write
MISTAKES: dict[str, str] = {
    "broken module": "import nonexistent_dependency_xyz\n",
    "syntax error": "class Env(:\n    pass\n",
    "raising module": "raise KeyError('config')\n",
    "reserved tool name": """
        from mcpgym import MCPEnvironment, tool

        class Env(MCPEnvironment):
            @tool
            def step(self, x: int) -> int:
                '''Step.'''
                return x
    """,
    "unsupported hint": """
        import socket
        from mcpgym import MCPEnvironment, tool

        class Env(MCPEnvironment):
            @tool
            def connect(self, sock: socket.socket) -> int:
                '''Connect.'''
                return 1
    """,
    "raising __init__": """
        from mcpgym import MCPEnvironment, tool

        class Env(MCPEnvironment):
            def __init__(self):
                super().__init__()
                raise RuntimeError("no config file")

            @tool
            def ping(self) -> str:
                '''Ping.'''
                return "pong"
    """,
    "plain function": "def Env():\n    return 42\n",
}

# what each command says and exits with, by mistake ("where" is the file:line the line names)
EXPECTED = {
    "broken module": (2, "No module named 'nonexistent_dependency_xyz'", "fix: pip install"),
    "syntax error": (2, "SyntaxError", "fix: correct that line"),
    "raising module": (2, "KeyError: 'config'", "fix: correct that line"),
    "reserved tool name": (2, "'step' is reserved", "fix: rename the method"),
    "unsupported hint": (2, "'sock' is a socket.socket", "fix: use str, int"),
    "raising __init__": (3, "RuntimeError: no config file", "fix: the environment must build"),
    "plain function": (2, "returned int, not an Environment", "fix: name an Environment"),
}
WHERE = {"broken module": 1, "syntax error": 1, "raising module": 1, "reserved tool name": 4}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the import rule adds the folder
    return tmp_path


def _write(folder: Path, mistake: str) -> str:
    name = f"author_env_{next(_ids)}"
    (folder / f"{name}.py").write_text(textwrap.dedent(MISTAKES[mistake]), encoding="utf-8")
    return name


def _one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_serve_says_one_line_with_the_file_and_the_fix(
    mistake: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _write(folder, mistake)
    code, says, fix = EXPECTED[mistake]
    assert main(["serve", f"{module}:Env", "--port", "0"]) == code
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("mcpgym serve: error: ") and says in line and fix in line, line
    if mistake in WHERE or mistake == "raising __init__":
        assert f"{module}.py:" in line, line  # the file (and line) to open


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_eval_says_one_line_and_a_documented_exit_code(
    mistake: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _write(folder, mistake)
    code, says, _ = EXPECTED[mistake]
    got = main(["eval", "--env", f"{module}:Env", "--episodes", "2", "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert got == code, err
    line = _one_line(err)
    assert line.startswith("mcpgym eval: error: ") and says in line, line


BAD_RESET = """
    from mcpgym import MCPEnvironment, tool

    class Env(MCPEnvironment):
        def reset(self, seed=None, episode_id=None, **kwargs):
            super().reset(seed=seed, episode_id=episode_id)
            raise RuntimeError("database not found")

        @tool
        def ping(self) -> str:
            "Ping."
            return "pong"
"""


def test_eval_exits_1_and_names_the_error_when_every_episode_failed(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "bad_reset_env.py").write_text(textwrap.dedent(BAD_RESET), encoding="utf-8")
    assert main(["eval", "--env", "bad_reset_env:Env", "--episodes", "2", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "2 episode(s) ended in: " in err and "RuntimeError: database not found" in err
    assert "error: every episode failed (2 of 2)" in err


TWO_KINDS = """
    from mcpgym import MCPEnvironment, tool

    class Env(MCPEnvironment):
        def reset(self, seed=None, episode_id=None, **kwargs):
            obs = super().reset(seed=seed, episode_id=episode_id)
            if seed % 3 == 0:
                raise RuntimeError(f"database {seed} not found")
            if seed % 3 == 1:
                raise KeyError(f"user {seed}")
            return obs

        @tool
        def ping(self) -> str:
            "Ping."
            return "pong"
"""


@pytest.mark.parametrize(("episodes", "code"), [(2, 1), (6, 0)])
def test_eval_prints_the_first_error_of_each_kind(
    folder: Path, capsys: pytest.CaptureFixture[str], episodes: int, code: int
) -> None:
    """Two kinds of failure (seeds 0, 3: RuntimeError; 1, 4: KeyError; 2, 5 play): one line
    each, naming its first error and counting its episodes; exit 1 only when none played."""
    (folder / "two_kinds_env.py").write_text(textwrap.dedent(TWO_KINDS), encoding="utf-8")
    argv = ["eval", "--env", "two_kinds_env:Env", "--episodes", str(episodes), "--quiet"]
    assert main(argv) == code
    err = capsys.readouterr().err
    ended = sorted(line for line in err.splitlines() if " episode(s) ended in: " in line)
    each = episodes // 3 if episodes > 2 else 1
    assert ended == [
        f"mcpgym eval: {each} episode(s) ended in: ExecutionError: Env.reset raised "
        "KeyError: 'user 1'",
        f"mcpgym eval: {each} episode(s) ended in: ExecutionError: Env.reset raised "
        "RuntimeError: database 0 not found",
    ], err
    assert ("every episode failed (2 of 2)" in err) == (code == 1)


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_validate_fails_check_entry_point_with_the_real_error(
    mistake: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _write(folder, mistake)
    _, says, _ = EXPECTED[mistake]
    code = main(["validate", f"{module}:Env", "--level", "static", "--check", "check_entry_point"])
    out = capsys.readouterr()
    assert code == 1, out  # a check failed (the validate exit codes)
    assert "Traceback" not in out.out + out.err
    lines = out.out.splitlines()
    failed = next(line for line in lines if "check_entry_point" in line)
    assert "FAIL" in failed and says.split(":")[0] in failed, out.out
    assert "ModuleNotFoundError: No module named" not in failed or mistake == "broken module"


def test_validate_imports_from_the_current_folder_like_serve(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "notes_env.py").write_text(
        textwrap.dedent(
            """
            from mcpgym import MCPEnvironment, tool

            class NotesEnv(MCPEnvironment):
                @tool
                def add(self, text: str) -> str:
                    '''Add a note.'''
                    return "ok"
            """
        ),
        encoding="utf-8",
    )
    main(["validate", "notes_env:NotesEnv", "--level", "static", "--check", "check_entry_point"])
    out = capsys.readouterr().out
    assert "PASS  check_entry_point" in out, out


@pytest.mark.parametrize("command", ["serve", "eval"])
def test_a_missing_module_names_where_it_was_looked_for(
    command: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["serve", "nomod_xyz:Env"] if command == "serve" else ["eval", "--env", "nomod_xyz:Env"]
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert "no module named 'nomod_xyz' in " + str(folder) in line and "fix: run from" in line


@pytest.mark.parametrize("command", ["serve", "eval"])
def test_an_unknown_name_lists_the_installed_environments(
    command: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["serve", "calendr"] if command == "serve" else ["eval", "--env", "calendr"]
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert "expected MODULE:ATTR or an installed environment's name" in line
    assert "calendar" in line and "guess" in line and "fix:" in line


def test_an_untyped_tool_gets_a_warning_naming_the_file_and_the_arguments(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    (folder / "loose_env.py").write_text(
        textwrap.dedent(
            """
            from mcpgym import MCPEnvironment, tool

            class LooseEnv(MCPEnvironment):
                @tool
                def add(self, a, b):
                    '''Add.'''
                    return a + b
            """
        ),
        encoding="utf-8",
    )
    main(["serve", "loose_env:LooseEnv", "--port", "0"])
    err = capsys.readouterr().err
    warning = next(line for line in err.splitlines() if "warning" in line)
    assert warning.startswith("mcpgym serve: warning: loose_env.py:5 (LooseEnv.add)"), warning
    assert "arguments a, b have no type hint" in warning and "fix: annotate" in warning


def test_debug_shows_the_traceback_the_one_line_hides(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _write(folder, "raising __init__")
    assert main(["serve", f"{module}:Env", "--port", "0", "--debug"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and f"{module}.py" in err and 'raise RuntimeError("no config' in err
    assert err.strip().splitlines()[-1].startswith("mcpgym serve: error: ")


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for code in ("0 ok", "1 the command ran", "2 usage", "3 the environment failed", "130"):
        assert code in out, out
