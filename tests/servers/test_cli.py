"""The `mcpgym` command line: argument handling in-process, and the real entry point
(`python -m mcpgym.servers`) as subprocesses: `--help`, a bad target, and a real server."""

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from helpers.wait import wait_until
from mcpgym.servers.cli.main import main

MCPGYM = [sys.executable, "-m", "mcpgym.servers"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Launched:
    """The subprocesses of this module, started together: each pays ~2 s of imports, so running
    them side by side keeps the module fast."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.procs = {
            "help": self._start("serve", "--help"),
            "bad-target": self._start("serve", "no_such_module_xyz:Env"),
            "serve": self._start(
                "serve", "mcpgym.examples.guess:GuessEnv", "--port", str(self.port)
            ),
        }

    @staticmethod
    def _start(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*MCPGYM, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def finished(self, name: str) -> tuple[int, str, str]:
        proc = self.procs[name]
        stdout, stderr = proc.communicate(timeout=60)
        return proc.returncode, stdout, stderr

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=10)


@pytest.fixture(scope="module")
def launched() -> Iterator[Launched]:
    procs = Launched()
    try:
        yield procs
    finally:
        procs.stop()


def test_serve_help(launched: Launched) -> None:
    code, stdout, stderr = launched.finished("help")
    assert code == 0, stderr
    for text in ("MODULE:ATTR", "--port", "--host", "--mode", "--max-sessions"):
        assert text in stdout


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("mcpgym.examples.guess", "expected MODULE:ATTR"),
        ("no_such_module_xyz:Env", "cannot import module 'no_such_module_xyz'"),
        ("mcpgym.examples.guess:NoSuchEnv", "has no attribute 'NoSuchEnv'"),
        ("mcpgym.examples.guess:GuessState", "not an mcpgym Environment subclass"),
    ],
    ids=["no colon", "missing module", "missing attribute", "not an environment"],
)
def test_bad_target_exits_2_with_a_clear_message(
    target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", target, "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcpgym serve: error: ")
    assert message in err


def test_bad_target_through_the_real_entry_point(launched: Launched) -> None:
    code, stdout, stderr = launched.finished("bad-target")
    assert code == 2, (stdout, stderr)
    assert "mcpgym serve: error: cannot import module 'no_such_module_xyz'" in stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["serve"], "the following arguments are required: MODULE:ATTR"),
        (["serve", "m:A", "--mode", "chaos"], "invalid choice: 'chaos'"),
        (["serve", "m:A", "--port", "eighty"], "invalid int value: 'eighty'"),
    ],
    ids=["no command", "no target", "bad mode", "bad port"],
)
def test_usage_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.server
def test_serve_answers_health_then_stops_on_sigterm(launched: Launched) -> None:
    proc, port = launched.procs["serve"], launched.port

    def healthy() -> bool:
        assert proc.poll() is None, f"mcpgym serve exited early: {proc.communicate()}"
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(healthy, timeout=60.0, what="mcpgym serve to answer /health")
    body = httpx.get(f"http://127.0.0.1:{port}/health").json()
    assert body.pop("workers")["detached"] == 0  # no timed-out call still running
    assert body == {
        "status": "healthy",
        "mode": "simulation",
        "sessions": 0,
    }
    assert httpx.get(f"http://127.0.0.1:{port}/metadata").json()["name"] == "GuessEnv"
    os.kill(proc.pid, signal.SIGTERM)
    # uvicorn shuts down gracefully, then re-raises the signal it caught
    assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
    _, stderr = proc.communicate(timeout=5)
    assert "Traceback" not in stderr
    first = stderr.splitlines()[0]  # the one start-up line: where, mode, what is exposed
    assert first == (
        f"mcpgym serve: GuessEnv (simulation) at http://127.0.0.1:{port}; "
        "/ws /reset /step /state /mcp /health; tools: guess, hint"
    )


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"mode": "production"}, "(production) at http://h:1; /mcp /health; tools: guess, lead"),
        ({"mode": "production", "token": "t", "production_ws": True}, "/mcp /ws /health"),
        ({"mode": "production", "token": "t"}, "; bearer token required"),
    ],
)
def test_startup_line_names_mode_routes_and_tools(settings: dict, says: str) -> None:
    from mcpgym.examples.guess import GuessEnv
    from mcpgym.servers.cli.serve import startup_line
    from mcpgym.servers.settings import ServerSettings

    assert says in startup_line(GuessEnv, ServerSettings(**settings), "h", 1)
    assert "[::1]:9" in startup_line(GuessEnv, ServerSettings(), "::1", 9)


def test_serve_in_simulation_mode_imports_neither_mcp_nor_plugins() -> None:
    """Cold start: `mcpgym serve` loads no plugin command and no `mcp` until /mcp is used."""
    code = (
        "import sys\n"
        "import uvicorn\n"
        "uvicorn.Server.run = lambda self, sockets=None: setattr(self, 'started', True)\n"
        "from mcpgym.servers.cli.main import main\n"
        "assert main(['serve', 'mcpgym.examples.guess:GuessEnv', '--port', '0']) == 0\n"
        "print('mcp' in sys.modules, 'mcpgym.harness' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


# What a parser never needs: the web stack, the MCP SDK, the models, the console, the event loop.
_HEAVY = (
    "asyncio", "docker", "httpx", "jsonschema", "mcp", "pydantic", "rich", "starlette",
    "uvicorn", "websockets", "yaml", "mcpgym.harness.eval.runner", "mcpgym.validate",
)  # fmt: skip

_HELP_IMPORTS = """
import sys
from mcpgym.servers.cli.main import build_parser, main

def helped(argv):
    try:
        main(argv)
    except SystemExit:
        pass
    return sorted(m for m in HEAVY if m in sys.modules)

print("IMPORTED --help", helped(["--help"]))
sub = next(a for a in build_parser()._actions if a.dest == "command")
for name in sorted(sub.choices):  # every command, also the plugins': the union stays light
    print("IMPORTED", name, helped([name, "--help"]))
"""


def test_help_imports_nothing_heavy() -> None:
    """Issue 29: every `mcpgym` call paid ~2 s of imports for `--help` alone. `mcpgym --help` and
    every command's `--help` need argparse and the plugins' `register` only: none of `_HEAVY`
    (a test on imports, not on time; `just bench` times it: cli_help_ms)."""
    code = f"HEAVY = {_HEAVY!r}\n" + _HELP_IMPORTS
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith("IMPORTED ")]
    assert len(lines) > 8, out.stdout  # --help and every command (serve, eval, validate, ...)
    assert [line for line in lines if not line.endswith(" []")] == []


def test_the_import_check_sees_a_heavy_import() -> None:
    """The check above can fail: a command that imports rich when it registers is caught."""
    code = f"HEAVY = {_HEAVY!r}\nimport rich\n" + _HELP_IMPORTS
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "IMPORTED --help ['rich']" in out.stdout
