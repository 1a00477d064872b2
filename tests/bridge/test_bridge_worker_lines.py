"""What a worker writes cannot hurt its host: every line that is not the protocol's strict JSON
frame (non-finite or out-of-range numbers, nesting past the depth limit, a JSON value that is not
an object, invalid UTF-8, junk without a newline, an answer out of turn) fails that worker with a
structured `WorkerError` of reason `protocol` (or `exited`), never another exception, and leaves
no process behind; a well-formed frame is answered as one. Hypothesis writes the lines; a stand-in
worker (this Python, no venv) says hello, then writes them.
"""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.wait import wait_until
from mcpgym.integrations.bridge import WorkerError, WorkerProcess
from mcpgym.runtime.proctree import alive

pytestmark = [pytest.mark.bridge, pytest.mark.timeout(300)]

# The stand-in: says hello and reads a request (or not, when the hostile line is its hello), writes
# the hostile bytes (with a newline or not), closes its stdout and waits to be stopped.
_STAND_IN = r"""
import os, sys
line = bytes.fromhex(os.environ["HOSTILE_LINE"])
out = sys.stdout.buffer
if os.environ["HOSTILE_AT"] == "answer":
    out.write(b'{"op": "hello", "protocol": 1}\n'); out.flush()
    sys.stdin.readline()
out.write(line); out.flush()
os.close(1)  # an unterminated line ends with the stream: the host must not wait for more
sys.stdin.read()  # and the stand-in stays until its host stops it
"""

POISON = [
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e999",
    b"-1e999",
    b"1" * 5000,  # past Python's integer-digits limit
    b'{"id": 1, "ok": true, "result": NaN}',
    b'{"id": 1, "ok": true, "result": {"reward": 1e999}}',
    b'{"id": 1, "ok": true, "result": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"id": 1, "ok": true, "result": ' + b'{"a":' * 200 + b"1" + b"}" * 200 + b"}",
    b"[1, 2, 3]",
    b'"a string"',
    b"null",
    b"\xff\xfe\xfa not utf-8",
    b'{"id": 1, "ok": true, "result": "\xc3\x28"}',  # an invalid UTF-8 sequence in a string
    b'{"id": 2, "ok": true}',  # out of turn
    b'{"id": 1}',  # no verdict
    b'{"id": 1, "ok": true, "result": {}} trailing',
    b"{",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
lines = st.one_of(
    st.sampled_from(POISON),
    st.binary(max_size=200).filter(lambda b: b"\n" not in b),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.tuples(st.sampled_from(POISON), st.binary(max_size=40)).map(lambda t: t[0] + t[1]),
)


def _worker(line: bytes, at: str, newline: bool) -> WorkerProcess:
    worker = WorkerProcess(sys.executable, "stand-in", "x:y", start_timeout_s=20)
    worker.argv = [sys.executable, "-S", "-c", _STAND_IN]
    worker.env = {"HOSTILE_LINE": (line + b"\n" * newline).hex(), "HOSTILE_AT": at}
    return worker


def _play(worker: WorkerProcess, at: str) -> dict | None:
    """The host's side: start (and, past the hello, one request); the frame or a WorkerError."""
    try:
        worker.start()
        return worker.request("call", {"name": "x", "arguments": {}}, timeout_s=2)
    except WorkerError as err:
        assert err.detail["reason"] in {"protocol", "exited", "timeout", "start_timeout"}, err
        assert err.message.startswith("bridge worker (stand-in, pid "), err.message
        return None


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(line=lines, at=st.sampled_from(["hello", "answer"]), newline=st.booleans())
def test_a_hostile_worker_line_is_a_structured_failure(line: bytes, at: str, newline: bool) -> None:
    worker = _worker(line, at, newline)
    pid: int | None = None
    try:
        frame = _play(worker, at)
        pid = worker.pid
        if frame is not None:  # only a well-formed answer to this request gets here
            assert at == "answer" and isinstance(frame, dict) and frame.get("id") == 1
            assert "ok" in frame
            json.dumps(frame, allow_nan=False)  # what passed is strict JSON
    finally:
        pid = pid or worker.pid
        worker.stop(grace_s=0)
    if pid is not None:
        wait_until(lambda: not alive(pid), timeout=10, what=f"stand-in {pid} to end")


@pytest.mark.parametrize("line", POISON, ids=range(len(POISON)))
def test_every_poison_answer_fails_the_worker_as_a_protocol_error(line: bytes) -> None:
    worker = _worker(line, "answer", newline=True)
    worker.start()
    pid = worker.pid
    assert pid is not None
    with pytest.raises(WorkerError) as info:
        worker.request("call", {"name": "x", "arguments": {}}, timeout_s=5)
    assert info.value.detail["reason"] == "protocol", info.value.message
    assert worker.pid is None
    wait_until(lambda: not alive(pid), timeout=10, what=f"stand-in {pid} to end")
