"""A container's owner dies, the container goes (issue 29: an unclosed
`SyncEnvClient.from_docker_image` left a healthy container behind). The owner is a real script
that SIGKILLs itself, so no `atexit`, finalizer or `finally` of its own runs: the provider's
reaper (`mcpgym.providers.reaper`) sees the pipe close and removes the run's containers. At a
normal interpreter exit, the unclosed client is stopped with a `ResourceWarning` naming it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from container_engines import Engine
from helpers.wait import wait_until
from mcpgym.providers._engine import listed
from mcpgym.providers.base import LABEL_OWNER_PID

pytestmark = pytest.mark.timeout(600)

OWNER = textwrap.dedent(
    """
    import os, signal, sys
    from mcpgym.client import SyncEnvClient

    image, engine, how = sys.argv[1:4]
    env = SyncEnvClient.from_docker_image(image, provider_options={"engine": engine})
    env.reset(seed=1)
    print(env.url, flush=True)
    sys.stdin.readline()  # the test has seen the container: now die
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    # how == "exit": end the script without env.close()
    """
)


def _owned_by(engine: Engine, pid: int) -> list[Any]:
    label = {"label": f"{LABEL_OWNER_PID}={pid}"}
    return listed(engine.client, label)  # summaries: no inspect racing the reaper's removal


@pytest.mark.parametrize("how", ["kill", "exit"])
def test_an_owner_that_dies_or_exits_leaves_no_container(
    engine: Engine, guess_image: str, how: str
) -> None:
    owner = subprocess.Popen(
        [
            sys.executable,
            "-W",
            "always::ResourceWarning",
            "-c",
            OWNER,
            guess_image,
            engine.host,
            how,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert owner.stdin is not None and owner.stdout is not None and owner.stderr is not None
    url = owner.stdout.readline().strip()
    if not url.startswith("ws://127.0.0.1:"):
        owner.kill()  # it may still wait on stdin: its stderr ends only once it is gone
        owner.wait(30)
        pytest.fail(f"the owner printed {url!r}: {owner.stderr.read()[-3000:]}")
    assert [c["State"] for c in _owned_by(engine, owner.pid)] == ["running"]
    owner.stdin.write("go\n")
    owner.stdin.flush()
    code = owner.wait(120)
    err = owner.stderr.read()
    for stream in (owner.stdin, owner.stdout, owner.stderr):
        stream.close()
    if how == "kill":
        assert code == -9, err  # it really died by SIGKILL
    else:
        assert code == 0, err
        assert "was not closed: stopping the server it started" in err
        assert "ResourceWarning" in err
    wait_until(lambda: _owned_by(engine, owner.pid) == [], timeout=60, what="the reaper")
