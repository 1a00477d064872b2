"""What a production server imports (docs/performance.md, "Idle memory in production").

`mcpgym serve --mode production` runs as a real subprocess; a thread of that process writes its
`sys.modules` to a file whenever the test asks. The server must have loaded everything `/mcp`
needs by the time `/health` answers (no lazy `/mcp`), must not have loaded what mcpgym keeps out
on purpose (the `mcp` client side, the high-level `MCPServer`, `cryptography`, the simulation-only
task routes), and its first `/mcp` calls must import nothing more from `mcp` or mcpgym.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers.mcp import modern_call, open_session, rpc, rpc_result
from helpers.wait import wait_until

pytestmark = pytest.mark.server

# Imported by the time /health says ok: everything /mcp runs on.
READY_AT_START = (
    "mcp.server.lowlevel.server",
    "mcp.server.streamable_http_manager",
    "mcp_types.methods",
    "mcpgym.servers.mcp.server",
    "mcpgym.servers.mcp.request_state",
    "mcpgym.servers.mcp.routes",
)
# Kept out of a production server of an environment whose tools never ask the client.
KEPT_OUT = (
    "mcp.client",  # the client side, pulled in by `mcp/__init__.py` (servers/mcp/lean.py)
    "mcp.server.mcpserver",  # the high-level server, pulled in by `mcp/server/__init__.py`
    "mcp.server.stdio",
    "httpx2",  # the client's HTTP transport
    "cryptography",  # the requestState seal (servers/mcp/request_state.py)
    "mcp.server.request_state",
    "mcpgym.servers.sim.tasks",  # simulation only
    "mcpgym.servers.openenv.tasks",
    "mcpgym.servers.task_replies",
    "mcpgym.tasks",
    "mcpgym.harness",
    "calendar_gym",
)
# A first call may import small stdlib helpers, never more of these.
NO_LATE_IMPORT = ("mcp", "mcp_types", "mcpgym", "cryptography", "pydantic", "starlette")

_RUNNER = """
import json, os, sys, threading, time
out = sys.argv[1]
def dumps():  # one dump per request file: <out>.N asked for -> <out>.N.json written
    n = 0
    while True:
        if os.path.exists(f"{out}.{n}"):
            tmp = f"{out}.{n}.tmp"
            with open(tmp, "w") as fh:
                json.dump(sorted(sys.modules), fh)
            os.replace(tmp, f"{out}.{n}.json")
            n += 1
        time.sleep(0.02)
threading.Thread(target=dumps, daemon=True).start()
from mcpgym.servers.cli.main import main
raise SystemExit(main(sys.argv[2:]))
"""


class Served:
    """The subprocess, its URL, and `modules()` (its `sys.modules` now)."""

    def __init__(self, tmp: Path, target: str) -> None:
        self.out = tmp / "modules"
        self.asked = 0
        self.log = (tmp / "server.log").open("w+")
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        cmd = ["serve", target, "--mode", "production", "--port", str(port), "--log-level", "error"]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _RUNNER, str(self.out), *cmd],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        wait_until(self._healthy, timeout=60.0, what="production server /health")

    def _healthy(self) -> bool:
        assert self.proc.poll() is None, self.tail()
        try:
            return httpx.get(f"{self.url}/health", timeout=2.0).status_code == 200
        except httpx.TransportError:
            return False

    def tail(self) -> str:
        self.log.seek(0)
        return self.log.read()[-3000:]

    def modules(self) -> set[str]:
        n, self.asked = self.asked, self.asked + 1
        Path(f"{self.out}.{n}").touch()
        done = Path(f"{self.out}.{n}.json")
        wait_until(done.exists, timeout=20.0, what="the server's module list")
        return set(json.loads(done.read_text()))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _under(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.fixture(scope="module")
def guess(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = Served(tmp_path_factory.mktemp("guess"), "mcpgym.examples.guess:GuessEnv")
    try:
        yield served
    finally:
        served.stop()


def _modern_call(
    http: httpx.Client, url: str, name: str, arguments: dict[str, object], **params: object
) -> dict[str, Any]:
    body, headers = modern_call(name, arguments, **params)
    response = http.post(url, json=body, headers=headers)
    return response.json() if response.status_code != 200 else rpc_result(response)


def test_ready_at_start_and_lean(guess: Served) -> None:
    at_start = guess.modules()
    assert _under(at_start, READY_AT_START) == sorted(READY_AT_START), "/mcp is not ready at start"
    assert _under(at_start, KEPT_OUT) == []
    assert "mcpgym serve: GuessEnv (production)" in guess.tail()


def test_first_calls_import_nothing_large(guess: Served) -> None:
    before = guess.modules()
    url = f"{guess.url}/mcp"
    with httpx.Client(timeout=15.0) as http:
        sid = open_session(http, url)
        listed = rpc_result(rpc(http, url, sid, "tools/list", {}))
        assert {t["name"] for t in listed["result"]["tools"]} >= {"guess"}
        called = rpc_result(
            rpc(http, url, sid, "tools/call", {"name": "guess", "arguments": {"n": 3}})
        )
        assert called["result"]["isError"] is False, called
        modern = _modern_call(http, url, "guess", {"n": 4})
        assert modern["result"]["isError"] is False, modern
    after = guess.modules()
    assert _under(after - before, NO_LATE_IMPORT) == []
    assert _under(after, KEPT_OUT) == []


def test_a_foreign_state_loads_the_boundary_and_is_refused(guess: Served) -> None:
    """Only a call that brings a `requestState` builds the sealing boundary, which refuses it."""
    url = f"{guess.url}/mcp"
    with httpx.Client(timeout=15.0) as http:
        refused = _modern_call(http, url, "guess", {"n": 5}, requestState="v1.forged")
        assert refused["error"]["code"] == -32602, refused
        assert refused["error"]["message"] == "Invalid or expired requestState"
        assert _modern_call(http, url, "guess", {"n": 6})["result"]["isError"] is False
    assert _under(guess.modules(), ("mcp.server.request_state", "cryptography"))


def test_lean_mcp_still_offers_every_name() -> None:
    """In a fresh process: after the server side is imported lean, the package's own names
    (client, errors, MCPServer) load on first use, once, and are the real objects."""
    code = (
        "import sys\n"
        "import mcpgym.servers.mcp.server\n"
        "from mcpgym.servers.mcp.lean import is_lean\n"
        "print(is_lean('mcp'), is_lean('mcp.server'), 'mcp.client' in sys.modules)\n"
        "from mcp import Client, MCPError\n"
        "import mcp.server\n"
        "from mcp.client.client import Client as Real\n"
        "from mcp.shared.exceptions import MCPError as RealError\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "print(Client is Real, MCPError is RealError, mcp.server.MCPServer is MCPServer)\n"
        "print(is_lean('mcp'), is_lean('mcp.server'), 'Client' in mcp.__all__)\n"
        "try:\n"
        "    mcp.no_such_name\n"
        "except AttributeError as exc:\n"
        "    print('AttributeError', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "True True False",
        "True True True",
        "False False True",
        "AttributeError module 'mcp' has no attribute 'no_such_name'",
    ]


def test_an_mcp_imported_before_is_left_alone() -> None:
    code = (
        "import mcp, sys\n"
        "import mcpgym.servers.mcp.server\n"
        "from mcpgym.servers.mcp.lean import is_lean\n"
        "print(is_lean('mcp'), 'mcp.client' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
