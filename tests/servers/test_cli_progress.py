"""Long commands show progress on stderr (issue 29: `mcpgym validate` said nothing for 6-14 s,
then everything at once): live on a terminal, and gone when the command ends; one plain line per
stage where stderr is not a terminal (a pipe, a CI log); stdout the same bytes either way.

The terminal is a real pseudo-terminal (`pty`), the command the real `mcpgym` in a subprocess.
(`mcpgym eval --pool` start-up: tests/pool/test_pool_eval.py; `mcpgym build`'s stages on a real
engine: tests/containers/test_init_build.py.)"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time

import pytest

from mcpgym.servers.cli.progress import Stages
from mcpgym.validate import planned

pytestmark = pytest.mark.timeout(180)

VALIDATE = [
    sys.executable,
    *("-m", "mcpgym.servers", "validate", "mcpgym.examples.guess:GuessEnv", "--level", "static"),
]
CHECKS = [c.name for c in planned("static")]
ESC = "\x1b"


def _on_a_terminal(cmd: list[str]) -> tuple[int, str, bytes]:
    """Run `cmd` with stderr on a pseudo-terminal and stdout on a pipe: (code, stdout, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    drawn = b""
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(30), out, drawn


def test_validate_draws_live_progress_on_a_terminal_and_takes_it_away() -> None:
    code, out, drawn = _on_a_terminal(VALIDATE)
    assert code == 0, out
    text = drawn.decode("utf-8", "replace")
    assert "mcpgym validate" in text and f"/{len(CHECKS)}]" in text, text
    assert f"[{len(CHECKS)}/{len(CHECKS)}]" in text  # it counted to the end, live
    assert "\r" in text and ESC in text  # redrawn in place, not printed line by line
    assert text.rstrip().endswith(f"{ESC}[2K")  # and the last thing drawn erases the line
    assert ESC not in out and "exit code 0" in out  # the report on stdout: plain text


def test_validate_says_one_line_per_check_where_stderr_is_no_terminal() -> None:
    done = subprocess.run([*VALIDATE, "--json"], capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr
    assert ESC not in done.stderr and ESC not in done.stdout
    report = json.loads(done.stdout)  # stdout is the JSON document and nothing else
    verdicts = [(c["name"], c["status"]) for c in report["results"]]
    assert [name for name, _ in verdicts] == CHECKS
    line = re.compile(r"^mcpgym validate: \[(\d+)/(\d+)\] (check_\w+) (\S+) \(\d+\.\d s\)$")
    seen = [m.groups() for m in map(line.match, done.stderr.splitlines()) if m]
    assert len(seen) == len(done.stderr.splitlines()), done.stderr  # nothing else on stderr
    # one line per check, counted in order, each with the report's verdict of that check
    n = str(len(CHECKS))
    assert seen == [(str(i), n, name, status) for i, (name, status) in enumerate(verdicts, 1)]


def test_overlapping_stages_are_each_counted_once(capsys: pytest.CaptureFixture[str]) -> None:
    """A pool starts its servers at once: stages begin together and end in any order."""
    with Stages("mcpgym eval: starting", total=3) as stage:
        for i in (1, 2, 3):
            stage(f"server {i}", None)
        for i in (2, 3, 1):
            stage(f"server {i}", "ready")
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "mcpgym eval: starting: [1/3] server 2 ready",
        "mcpgym eval: starting: [2/3] server 3 ready",
        "mcpgym eval: starting: [3/3] server 1 ready",
    ]


def test_a_closed_stderr_does_not_stop_the_command() -> None:
    """Progress is a courtesy: a stderr that fails every write (closed, as `2>&-` leaves it)
    silences it, and the command's stages still run and end."""
    with open(os.devnull, "w") as gone:
        gone.close()
        with Stages("mcpgym build", stream=gone) as stage:
            stage("a step", None)
            stage("a step", "done")
        assert stage.ended == 1
