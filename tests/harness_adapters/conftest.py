"""Fixtures for the harness adapter tests: every test must leave no process, temp folder or
port behind (checked after each test through /proc, the temp folder and a connect attempt)."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from helpers.wait import wait_until
from mcpgym.harness.adapters.process import descendants
from mcpgym.harness.hosted.env import HarnessEnvironment

HERE = Path(__file__).resolve().parent
AGENT = [sys.executable, str(HERE / "ndjson_agent.py")]


def _temp_folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).iterdir()}


def port_closed(port: int) -> bool:
    """Nothing accepts connections on 127.0.0.1:`port` any more."""
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) != 0


class Leaks:
    """Ports a test used; checked (with every child process and temp folder) at its end.

    Child processes are those of this test process, found through /proc."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        self.children = set(descendants(os.getpid()))
        self.folders = _temp_folders()

    def port(self, port: int) -> int:
        self.ports.append(port)
        return port

    def check(self) -> None:
        def new_children() -> set[int]:
            return set(descendants(os.getpid())) - self.children

        wait_until(lambda: not new_children(), timeout=10.0, what="child processes to exit")
        assert _temp_folders() - self.folders == set(), "temp folders left behind"
        for port in self.ports:
            assert port_closed(port), f"port {port} still accepts connections"


@pytest.fixture(autouse=True)
def leaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Leaks]:
    """Each test gets a temp folder of its own (so runs elsewhere on the machine cannot confuse
    the check), which must be empty again at the end."""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    tracker = Leaks()
    yield tracker
    tracker.check()


@pytest.fixture
async def harnesses(leaks: Leaks) -> AsyncIterator[list[HarnessEnvironment]]:
    """Append every `HarnessEnvironment` a test makes: each is closed at the end, even when the
    test fails, before the leak check runs; its tool server's ports are checked."""
    made: list[HarnessEnvironment] = []
    yield made
    for env in made:
        await env.aclose()
