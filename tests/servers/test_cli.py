"""The `mcpgym` command line, run as a real subprocess (`python -m mcpgym.servers`)."""

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from helpers.wait import wait_until
from mcpgym.servers.cli import main

MCPGYM = [sys.executable, "-m", "mcpgym.servers"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCPGYM, *args], capture_output=True, text=True, timeout=60, check=False)


def test_serve_help() -> None:
    result = run("serve", "--help")
    assert result.returncode == 0, result.stderr
    for text in ("MODULE:ATTR", "--port", "--host", "--mode", "--max-sessions"):
        assert text in result.stdout


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


def test_bad_target_through_the_real_entry_point() -> None:
    result = run("serve", "no_such_module_xyz:Env")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "mcpgym serve: error: cannot import module 'no_such_module_xyz'" in result.stderr
    assert "Traceback" not in result.stderr


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
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = _free_port()
    proc = subprocess.Popen(
        [*MCPGYM, "serve", "mcpgym.examples.guess:GuessEnv", "--port", str(port), "--max-sessions", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc, port
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=10)


@pytest.mark.server
def test_serve_answers_health_then_stops_on_sigterm(served: tuple[subprocess.Popen[str], int]) -> None:
    proc, port = served

    def healthy() -> bool:
        assert proc.poll() is None, f"mcpgym serve exited early: {proc.communicate()}"
        try:
            return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1.0).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(healthy, timeout=30.0, what="mcpgym serve to answer /health")
    assert httpx.get(f"http://127.0.0.1:{port}/health").json() == {
        "status": "healthy",
        "mode": "simulation",
        "sessions": 0,
    }
    assert httpx.get(f"http://127.0.0.1:{port}/metadata").json()["name"] == "GuessEnv"
    os.kill(proc.pid, signal.SIGTERM)
    # uvicorn shuts down gracefully, then re-raises the signal it caught
    assert proc.wait(timeout=15) in (0, -signal.SIGTERM)
    _, stderr = proc.communicate(timeout=5)
    assert "Traceback" not in stderr
