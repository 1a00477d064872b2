"""The bridge worker's lifecycle under a misbehaving foreign library: every descendant dies
with the worker (a plain child, a `setsid` child and an orphaned `setsid` daemon) on close and
when the host is SIGKILLed; a protocol line is bounded either way and an over-long one fails
the worker cleanly (no traceback in the reader, no memory kept); a worker past its memory budget
ends its session only. The real worker loop with a test backend, under this Python (no venv).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from bridge_helpers import FIXTURES

from helpers.wait import wait_until
from mcpgym.integrations.bridge import WorkerError, WorkerProcess
from mcpgym.runtime.proctree import alive

pytestmark = [pytest.mark.bridge, pytest.mark.timeout(120)]


def _worker(**kwargs: Any) -> WorkerProcess:
    worker = WorkerProcess(sys.executable, "lifecycle", "x:y", start_timeout_s=30, **kwargs)
    worker.argv[2] = str(FIXTURES / "lifecycle_worker.py")
    worker.start()
    worker.request("reset", {}, 30)
    return worker


def _call(worker: WorkerProcess, name: str, **arguments: Any) -> dict[str, Any]:
    return worker.request("call", {"name": name, "arguments": arguments}, 30)


def _gone(pids: list[int]) -> None:
    wait_until(lambda: not any(alive(p) for p in pids), timeout=10, what=f"{pids} to end")


def _family(worker: WorkerProcess) -> list[int]:
    pids = _call(worker, "spawn")["result"]["output"]
    assert len(pids) == 3 and all(alive(p) for p in pids)
    assert os.getpgid(pids[1]) != worker.pid and os.getpgid(pids[2]) != worker.pid
    return pids


def test_stop_kills_children_that_left_the_group() -> None:
    worker = _worker()
    pids = [*_family(worker), worker.pid]
    worker.stop()
    _gone(pids)


def test_a_failed_worker_takes_its_family_along() -> None:
    worker = _worker(max_line_bytes=1 << 20)
    pids = [*_family(worker), worker.pid]
    with pytest.raises(WorkerError):
        _call(worker, "spew", mib=4)
    _gone(pids)


HOST = textwrap.dedent(
    """
    import json, sys, threading
    from mcpgym.integrations.bridge import WorkerProcess
    worker = WorkerProcess(sys.executable, "lifecycle", "x:y", start_timeout_s=30)
    worker.argv[2] = sys.argv[1]
    worker.start()
    worker.request("reset", {}, 30)
    pids = worker.request("call", {"name": "spawn", "arguments": {}}, 30)["result"]["output"]
    if sys.argv[2] == "busy":  # the worker is inside a tool call that never returns
        call = {"name": "hang", "arguments": {}}
        threading.Thread(target=worker.request, args=("call", call, 600), daemon=True).start()
    print(json.dumps([worker.pid, *pids]), flush=True)
    sys.stdin.read()
    """
)


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "mid-call"])
def test_host_sigkill_leaves_no_process(busy: bool) -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(FIXTURES / "lifecycle_worker.py"), str(busy and "busy")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert host.stdout is not None
    pids = json.loads(host.stdout.readline())
    os.kill(host.pid, signal.SIGKILL)
    host.wait(timeout=10)
    host.stdin.close()  # pyright: ignore[reportOptionalMemberAccess]
    host.stdout.close()
    _gone(pids)


def _rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGESIZE") / 2**20


def test_an_unterminated_line_is_bounded_and_fails_the_worker() -> None:
    worker = _worker(max_line_bytes=1 << 20)
    before = _rss_mb()
    with pytest.raises(WorkerError) as info:
        _call(worker, "spew", mib=100)
    assert info.value.detail["reason"] == "protocol"
    assert "longer than 1048576 bytes" in info.value.message
    assert worker.pid is None
    assert _rss_mb() - before < 30  # the host never held the 100 MiB


def test_an_answer_over_the_line_limit_is_a_tool_error() -> None:
    worker = _worker(max_line_bytes=1 << 20)
    frame = _call(worker, "big", mib=2)
    assert not frame["ok"] and frame["error"]["kind"] == "tool"
    assert "line limit of 1048576 bytes" in frame["error"]["message"]
    assert _call(worker, "echo", a=1)["result"]["output"] == {"a": 1}  # still serving
    worker.stop()


def test_a_request_over_the_line_limit_is_refused_before_sending() -> None:
    worker = _worker(max_line_bytes=1 << 20)
    with pytest.raises(WorkerError) as info:
        _call(worker, "echo", blob="z" * (2 << 20))
    assert info.value.detail["reason"] == "request_too_large"
    assert worker.alive and _call(worker, "echo", a=2)["result"]["output"] == {"a": 2}
    worker.stop()


def _raw_worker(*options: str) -> subprocess.Popen[bytes]:
    """The worker on plain pipes (no `WorkerProcess`), past its hello."""
    cmd = [sys.executable, str(FIXTURES / "lifecycle_worker.py"), "lifecycle", "x:y", *options]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    assert json.loads(proc.stdout.readline())["op"] == "hello"
    return proc


def _finish(proc: subprocess.Popen[bytes]) -> None:
    """Close stdin, expect a clean exit, close the pipes (killing it if it does not go)."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_an_overlong_request_line_is_a_protocol_error_in_the_worker() -> None:
    proc = _raw_worker("--max-line-bytes", "65536")
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"[" * (1 << 20) + b"\n")
        proc.stdin.write(b'{"id": 7, "op": "reset", "args": {}}\n')
        proc.stdin.flush()
        first, second = json.loads(proc.stdout.readline()), json.loads(proc.stdout.readline())
        assert first["ok"] is False and first["error"]["kind"] == "protocol"
        assert first["id"] is None
        assert second["id"] == 7 and second["ok"] is True
    finally:
        _finish(proc)


@pytest.mark.parametrize("overlong_every", [0, 3])
def test_pipelined_requests_are_all_answered_in_order(overlong_every: int) -> None:
    """A burst written at once (the reader thread runs ahead of the loop) loses no line: each
    request gets its answer, in order, over-long lines among them included."""
    proc = _raw_worker("--max-line-bytes", "4096")
    assert proc.stdin is not None and proc.stdout is not None
    try:
        burst, expected = bytearray(), []
        for i in range(300):
            if overlong_every and i % overlong_every == 0:
                burst += b"x" * 10_000 + b"\n"
                expected.append(None)
            else:
                arguments = {"name": "echo", "arguments": {"i": i}}
                burst += json.dumps({"id": i, "op": "call", "args": arguments}).encode() + b"\n"
                expected.append(i)
        proc.stdin.write(bytes(burst))
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in expected]
        assert [answer["id"] for answer in answers] == expected
        for answer in answers:
            if answer["id"] is None:
                assert answer["error"]["kind"] == "protocol"
            else:
                assert answer["result"]["output"] == {"i": answer["id"]}
    finally:
        _finish(proc)


def test_memory_budget_ends_that_worker_only() -> None:
    worker = _worker(memory_limit_mb=256)
    other = _worker()
    assert _call(worker, "alloc", mib=16)["ok"]
    with pytest.raises(WorkerError) as info:
        _call(worker, "alloc", mib=512)
    assert info.value.detail["reason"] == "memory" and "256 MiB" in info.value.message
    assert worker.pid is None
    assert _call(other, "alloc", mib=512)["ok"]  # no budget of its own: unaffected
    other.stop()
