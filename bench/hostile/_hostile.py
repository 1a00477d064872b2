"""The hostile inputs of `bench/reliability.py fuzz` (hypothesis strategies) and their driver."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_poison = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000, '"\\ud800"'])


def _splice(text: str, poison: str, where: int) -> str:
    spots = [i for i, ch in enumerate(text) if ch in ",:[" and i + 1 < len(text)]
    if not spots:
        return poison
    i = spots[where % len(spots)] + 1
    return text[:i] + poison + ("," if text[i : i + 1] not in "]}," else "") + text[i:]


_frames = st.builds(
    lambda kind, data, extra: json.dumps({"type": kind, "data": data, **extra}),
    st.sampled_from(["reset", "step", "state", "mcp", "nope"]),
    _values
    | st.fixed_dictionaries(
        {"type": st.sampled_from(["call_tool", "list_tools"]), "tool_name": st.text(max_size=8)},
        optional={"arguments": _values},
    ),
    st.dictionaries(st.sampled_from(["id", "timeout_s", "seed"]), _values, max_size=2),
)
_deep = st.integers(min_value=30, max_value=50_000).map(lambda n: "[" * n + "]" * n)
HOSTILE = st.one_of(
    _frames,
    st.builds(_splice, _frames, _poison, st.integers(0, 50)),
    _values.map(json.dumps),
    _deep,
    st.text(max_size=200),
)


def _strict(text: str | bytes) -> bool:
    def refuse(token: str) -> Any:
        raise ValueError(token)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


def _examples(n: int) -> list[str]:
    out: list[str] = []

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(HOSTILE)
    def collect(text: str) -> None:
        out.append(text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))

    collect()
    return out


def run_fuzz(base: str, n: int) -> dict[str, tuple[int, int, int]]:
    """Send `n` hostile inputs per transport; `{transport: (sent, 5xx, not strict JSON)}`."""
    inputs = _examples(n)
    counts: dict[str, tuple[int, int, int]] = {}
    with httpx.Client(base_url=base, timeout=60) as http:
        for route in ("/reset", "/step", "/mcp"):
            sent = errors = bad = 0
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            }
            for text in inputs:
                r = http.post(route, content=text.encode(), headers=headers)
                sent += 1
                errors += r.status_code >= 500
                is_json = r.headers.get("content-type", "").startswith("application/json")
                bad += bool(r.content) and is_json and not _strict(r.content)
                bad += r.status_code >= 400 and not is_json
            counts[f"HTTP {route}"] = (sent, errors, bad)
    sent = bad = 0
    ws_url = base.replace("http://", "ws://") + "/ws"
    conn = None
    for text in inputs:
        if conn is None:
            conn = connect(ws_url, max_size=None).__enter__()
        sent += 1
        try:
            conn.send(text)
            bad += not _strict(conn.recv(timeout=60))
        except (ConnectionClosed, TimeoutError):
            conn = None
    if conn is not None:
        conn.close()
    counts["WS /ws"] = (sent, 0, bad)
    counts["stdio"] = _fuzz_stdio(inputs)
    return counts


def _fuzz_stdio(inputs: list[str]) -> tuple[int, int, int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mcpgym.servers",
            "serve",
            "mcpgym.examples.guess:GuessEnv",
            "--stdio",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    bad = 0
    try:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "0"},
        }
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}) + "\n"
        )
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
        )
        proc.stdin.flush()
        proc.stdout.readline()
        for i, text in enumerate(inputs):
            ping = 1_000_000 + i
            proc.stdin.write(text.replace("\n", " ").replace("\r", " ") + "\n")
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ping, "method": "ping"}) + "\n")
            proc.stdin.flush()
            timer = threading.Timer(60, proc.kill)
            timer.start()
            try:
                while True:
                    line = proc.stdout.readline()
                    if not line:
                        return len(inputs), 1, bad  # the server died: count it as a 5xx
                    bad += not _strict(line)
                    message = json.loads(line)
                    if message.get("id") == ping and "result" in message:
                        break
            finally:
                timer.cancel()
    finally:
        proc.kill()
        proc.wait()
    return len(inputs), 0, bad
