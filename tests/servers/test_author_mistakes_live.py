"""The author's mistakes that need a real process: a real `mcpgym serve` whose log must hold the
traceback of every environment exception (on every transport), `--debug` handing it back to
the operator only, a taken port, Ctrl-C during `mcpgym eval`, and a closed stdout (`| head`).

The environment under test lives in a throwaway folder that is the server's working directory,
as a newcomer runs it (`cd my_env && mcpgym serve notes_env:NotesEnv`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from helpers.ctrl_c import ctrl_c_able
from helpers.mcp import StdioProcess, open_session, rpc, rpc_result
from helpers.wait import wait_until

pytestmark = [pytest.mark.server, pytest.mark.timeout(180)]

MCPGYM = [sys.executable, "-m", "mcpgym.servers"]

NOTES = """
    from typing import Any

    from mcpgym import MCPEnvironment, Observation, State, tool


    class NotesEnv(MCPEnvironment):
        def reset(self, seed=None, episode_id=None, **kwargs: Any) -> Observation:
            super().reset(seed=seed, episode_id=episode_id)
            if kwargs.get("boom"):
                raise RuntimeError("database not found")
            return Observation(metadata={"prompt": "take notes"})

        @tool
        def add(self, text: str) -> str:
            "Add a note."
            if text == "boom":
                raise RuntimeError("disk full")
            return "ok"
"""
RESET_LINE = 'raise RuntimeError("database not found")'
TOOL_LINE = 'raise RuntimeError("disk full")'


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """`mcpgym serve notes_env:NotesEnv ARGS` in `folder`, its stderr collected as it comes."""

    def __init__(self, folder: Path, *args: str) -> None:
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [*MCPGYM, "serve", "notes_env:NotesEnv", "--port", str(self.port), *args],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=ctrl_c_able,  # `stop` is the reader's Ctrl-C
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.url = f"http://127.0.0.1:{self.port}"
        wait_until(self._healthy, timeout=90, what="mcpgym serve to answer /health")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        self.lines.extend(self.proc.stderr)

    def _healthy(self) -> bool:
        assert self.proc.poll() is None, "".join(self.lines)
        try:
            return httpx.get(self.url + "/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def logged(self, *needles: str) -> str:
        """Wait until the log holds every needle (a log line arrives a moment after the reply)."""
        wait_until(lambda: all(n in self.log for n in needles), timeout=15, what=str(needles))
        return self.log

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._reader.join(timeout=10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("newcomer")
    (where / "notes_env.py").write_text(textwrap.dedent(NOTES), encoding="utf-8")
    return where


@pytest.fixture(scope="module")
def served(folder: Path) -> Iterator[Served]:
    server = Served(folder)
    yield server
    server.stop()


def _traceback_of(log: str, line: str) -> str:
    """The logged traceback block that ends at the environment's `line`."""
    assert "Traceback (most recent call last)" in log, log
    at = log.index(line)
    block = log[log.rindex("Traceback (most recent call last)", 0, at) : at]
    assert "notes_env.py" in block, block  # the file and line number the author opens
    return block


def test_a_raising_reset_over_http_is_logged_with_its_traceback(served: Served) -> None:
    reply = httpx.post(served.url + "/reset", json={"boom": True, "episode_id": "secret-http"})
    assert reply.status_code == 500
    error = reply.json()["error"]
    assert error["code"] == "EXECUTION_ERROR" and "database not found" in error["message"]
    assert "traceback" not in error  # no --debug: the client gets the one line only
    log = served.logged("NotesEnv.reset raised RuntimeError: database not found", RESET_LINE)
    _traceback_of(log, RESET_LINE)
    assert "secret-http" not in log  # the episode id is named by a fingerprint, never itself


def test_a_raising_reset_and_tool_over_ws_name_their_session_and_episode(served: Served) -> None:
    with connect(served.url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"episode_id": "secret-ws"}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        call = {"type": "call_tool", "tool_name": "add", "arguments": {"text": "boom"}}
        ws.send(json.dumps({"type": "step", "data": call}))
        reply = json.loads(ws.recv(timeout=30))
    error = reply["data"]["observation"]["error"]
    assert error["error_type"] == "execution_error" and "disk full" in error["message"]
    assert "traceback" not in error
    log = served.logged("NotesEnv.add (tool) raised RuntimeError: disk full", TOOL_LINE)
    line = next(x for x in log.splitlines() if "NotesEnv.add (tool) raised" in x)
    assert "(session s" in line and " ws, episode #" in line, line
    assert "secret-ws" not in log
    _traceback_of(log, TOOL_LINE)


def test_a_raising_tool_over_mcp_is_logged(folder: Path) -> None:
    server = Served(folder, "--mode", "production")
    try:
        with httpx.Client(timeout=30) as http:
            sid = open_session(http, server.url + "/mcp")
            params = {"name": "add", "arguments": {"text": "boom"}}
            result = rpc_result(rpc(http, server.url + "/mcp", sid, "tools/call", params))
        assert result["result"]["isError"] is True
        assert "Traceback" not in json.dumps(result)
        log = server.logged("NotesEnv.add (tool) raised RuntimeError: disk full", TOOL_LINE)
        assert "session production" in log
        _traceback_of(log, TOOL_LINE)
    finally:
        server.stop()


def test_a_raising_tool_over_stdio_is_logged_on_stderr(folder: Path) -> None:
    proc = StdioProcess("notes_env:NotesEnv", cwd=str(folder))
    try:
        proc.initialize()
        params = {"name": "add", "arguments": {"text": "boom"}}
        reply = proc.request("tools/call", params, request_id=2)
        assert reply["result"]["isError"] is True
        _, stderr = proc.close_stdin()
    finally:
        proc.kill()
    assert "NotesEnv.add (tool) raised RuntimeError: disk full" in stderr, stderr
    _traceback_of(stderr, TOOL_LINE)


def test_debug_returns_the_traceback_to_the_operator_only(folder: Path, tmp_path: Path) -> None:
    server = Served(folder, "--debug")
    try:
        error = httpx.post(server.url + "/reset", json={"boom": True}).json()["error"]
        assert RESET_LINE in error["traceback"] and "notes_env.py" in error["traceback"]
    finally:
        server.stop()
    principals = tmp_path / "principals.json"
    principals.write_text(json.dumps({"tok-alice": {}}), encoding="utf-8")
    args = ("--mode", "production", "--debug", "--principals", str(principals), "--token", "op")
    server = Served(folder, *args)
    try:
        with httpx.Client(timeout=30) as http:
            auth = {"Authorization": "Bearer tok-alice"}
            sid = open_session(http, server.url + "/mcp", **auth)
            params = {"name": "add", "arguments": {"text": "boom"}}
            reply = rpc(http, server.url + "/mcp", sid, "tools/call", params, **auth)
            result = rpc_result(reply)
        assert result["result"]["isError"] is True
        assert "Traceback" not in json.dumps(result)  # a principal never gets one
        server.logged(TOOL_LINE)  # the log has it all the same
    finally:
        server.stop()


def test_log_level_debug_shows_every_repeat_of_a_tool_error(folder: Path) -> None:
    """A tool's repeated exception goes at info (the first is a warning): `--log-level`
    reaches mcpgym's own loggers, so every one is there, each with its traceback."""
    server = Served(folder, "--log-level", "debug")
    try:
        with connect(server.url.replace("http", "ws") + "/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {}}))
            ws.recv(timeout=30)
            for _ in range(2):
                call = {"type": "call_tool", "tool_name": "add", "arguments": {"text": "boom"}}
                ws.send(json.dumps({"type": "step", "data": call}))
                ws.recv(timeout=30)
        log = server.logged(TOOL_LINE)
        wait_until(lambda: server.log.count("NotesEnv.add (tool) raised") == 2, timeout=15)
        assert log.count("Traceback (most recent call last)") >= 2
    finally:
        server.stop()


def test_a_taken_port_is_one_line_suggesting_port_0(served: Served, folder: Path) -> None:
    out = subprocess.run(
        [*MCPGYM, "serve", "notes_env:NotesEnv", "--port", str(served.port)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.returncode == 4, out.stderr
    assert out.stderr.strip() == (
        f"mcpgym serve: error: port {served.port} is already in use on 127.0.0.1; fix: pass "
        "--port 0 (a free port, named in the start-up line) or stop the other server"
    )


def test_the_start_up_line_comes_after_the_bind_and_names_the_port(folder: Path) -> None:
    server = Served(folder, "--web")
    try:
        first = server.log.splitlines()[0]
        assert first.startswith(f"mcpgym serve: NotesEnv (simulation) at {server.url};"), first
        assert "/web" in first  # the browser UI is listed when it is served
    finally:
        server.stop()


def test_ctrl_c_during_eval_is_one_line_and_130(tmp_path: Path) -> None:
    out = tmp_path / "run"
    many = ["--episodes", "5000", "--concurrency", "2", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(
        [*MCPGYM, "eval", "--env", "calendar", "--agent", "random", *many],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_able,  # the suite may run with SIGINT ignored (a background job)
    )
    episodes = out / "episodes.jsonl"
    wait_until(lambda: episodes.is_file() and episodes.stat().st_size > 0, timeout=120)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "mcpgym eval: interrupted (Ctrl-C); the episodes that ended are in " in stderr
    assert "rerun the same command to resume" in stderr


@pytest.mark.parametrize("argv", [["list"], ["--help"], ["validate", "--help"]])
def test_a_closed_stdout_ends_quietly(argv: list[str]) -> None:
    proc = subprocess.Popen(
        [*MCPGYM, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader left before the first line (`| head -0`)
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    code = proc.wait(timeout=90)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert stderr == ""
    assert code in (0, 1, 141), code  # 141: ours; 1: rich's, for a table it could not write


def test_a_simulation_client_on_a_production_server_is_told_mode_mismatch(folder: Path) -> None:
    import asyncio

    from mcpgym import EnvClient, SyncEnvClient
    from mcpgym.errors import RemoteError

    server = Served(folder, "--mode", "production")
    try:
        with pytest.raises(RemoteError) as caught, SyncEnvClient(server.url) as env:
            env.reset()
        assert caught.value.remote_code == "MODE_MISMATCH"
        assert "serves production mode" in caught.value.message
        assert "fix: serve it without --mode production" in caught.value.message

        async def play() -> None:
            async with EnvClient(server.url) as env:
                await env.reset()

        with pytest.raises(RemoteError) as caught:
            asyncio.run(play())
        assert caught.value.remote_code == "MODE_MISMATCH"
    finally:
        server.stop()


def test_a_server_that_exits_at_start_is_not_said_to_be_slow(tmp_path: Path) -> None:
    """Issue 29: check_server_starts said "did not start within 30 s" after 4.5 s."""
    from mcpgym.validate.serve import LocalServer, ServerStartError

    (tmp_path / "sulky_env.py").write_text(
        "from mcpgym import MCPEnvironment\n\n"
        "class Env(MCPEnvironment):\n"
        "    def __init__(self):\n"
        "        raise RuntimeError('no config file')\n",
        encoding="utf-8",
    )
    with pytest.raises(ServerStartError) as caught:
        LocalServer("sulky_env:Env", root=tmp_path, startup_s=120).start()
    message = str(caught.value)
    assert message.startswith("the server exited with code 3 after "), message
    assert "within" not in message
    assert "RuntimeError: no config file (sulky_env.py:5)" in message
