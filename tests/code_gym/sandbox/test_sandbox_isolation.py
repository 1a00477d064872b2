"""Isolation attacks: each runs guarded (must fail) and, where it is safe to, with its guard off
(must then succeed), which proves the guard is what stops it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from code_gym.sandbox import Sandbox
from sandbox_helpers import BoxFactory, describe, gone, kill_all, processes_with

pytestmark = pytest.mark.code

GUARDED = pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "weakened"])
TOKEN = "mcpgym-fake-token-" + uuid.uuid4().hex


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A stand-in for the server: a host process with a token in its environment."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", f"--token={TOKEN}"],
        env={**os.environ, "MCPGYM_API_TOKEN": TOKEN},
    )
    yield proc
    proc.kill()
    proc.wait()


# The token comes on stdin: in the program's own command line it would find itself.
SCAN_ENVIRON = """
import glob, os
token = input()
hits = [k for k, v in os.environ.items() if token in v]
for path in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
    try:
        if token.encode() in open(path, "rb").read():
            hits.append(path)
    except OSError:
        pass
print("hits", hits)
"""


@GUARDED
def test_host_environment_is_not_inherited(
    make_box: BoxFactory, monkeypatch: pytest.MonkeyPatch, guarded: bool
) -> None:
    """The server's variables (a token among them) never reach the sandbox's environment."""
    monkeypatch.setenv("MCPGYM_API_TOKEN", TOKEN)
    box = make_box(weaken=() if guarded else {"env"})
    r = box.run(["python", "-c", SCAN_ENVIRON], stdin=TOKEN)
    assert r.exit_code == 0, r
    assert (r.stdout == "hits []\n") is guarded, r


@GUARDED
def test_proc_environ_of_host_processes_is_unreadable(
    make_box: BoxFactory, victim: subprocess.Popen[bytes], guarded: bool
) -> None:
    """A server with a token in its environment and on its command line.

    Guarded: a private /proc of the sandbox's own pid namespace — the server is not there.
    Weakened (host pid namespace): the server's /proc entry and its command line (with the
    token) are readable. Its environ stays unreadable even then: the kernel refuses it to a
    process of another user namespace, a second guard this test cannot switch off."""
    box = make_box(weaken=() if guarded else {"pidns", "userns"})
    r = box.run(["python", "-c", SCAN_ENVIRON], stdin=TOKEN)
    assert r.exit_code == 0, r
    if guarded:
        assert r.stdout == "hits []\n"
    else:
        assert f"/proc/{victim.pid}/cmdline" in r.stdout


@pytest.fixture
def pong_server() -> Iterator[int]:
    """A real TCP server on the host's 127.0.0.1 that answers b"pong"."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join()
    srv.close()


@GUARDED
def test_no_socket_reaches_the_host(make_box: BoxFactory, pong_server: int, guarded: bool) -> None:
    box = make_box(weaken=() if guarded else {"net"})
    code = (
        "import socket\n"
        f"s = socket.create_connection(('127.0.0.1', {pong_server}), timeout=3)\n"
        "print(s.recv(4).decode())\n"
    )
    r = box.run(["python", "-c", code])
    if guarded:
        assert r.exit_code != 0 and "pong" not in r.stdout
        assert "ConnectionRefusedError" in r.stderr or "unreachable" in r.stderr, r
    else:
        assert r.stdout == "pong\n", r


def test_no_dns_and_no_interface_but_loopback(box: Sandbox) -> None:
    """Name resolution fails (no resolver, no route); the network namespace has only `lo`.
    No weakened twin: the test machine has no internet to prove the contrary with; the
    127.0.0.1 test above proves the network namespace is the guard."""
    code = (
        "import socket\n"
        "print(sorted(n for _, n in socket.if_nameindex()))\n"
        "try:\n"
        "    socket.getaddrinfo('pypi.org', 443)\n"
        "    print('resolved')\n"
        "except OSError as e:\n"
        "    print('failed', type(e).__name__)\n"
        "s = socket.socket()\n"
        "s.settimeout(2)\n"
        "print('connect', s.connect_ex(('1.1.1.1', 53)))\n"
    )
    r = box.run(["python", "-c", code])
    lines = r.stdout.splitlines()
    assert lines[0] == "['lo']" and lines[1] == "failed gaierror", r
    assert lines[2] != "connect 0"


@GUARDED
def test_writing_outside_the_workspace_fails(
    make_box: BoxFactory, tmp_path: Path, guarded: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    box = make_box(weaken=() if guarded else {"hostfs", "userns"})
    targets = [str(outside / "pwned"), "/usr/pwned", "/pwned", "/etc/pwned", "/proc/pwned"]
    code = (
        "ok = []\n"
        f"for t in {targets!r}:\n"
        "    try:\n"
        "        open(t, 'w').write('x')\n"
        "        ok.append(t)\n"
        "    except OSError:\n"
        "        pass\n"
        "print(ok)\n"
    )
    r = box.run(["python", "-c", code])
    if guarded:
        assert r.stdout == "[]\n", r
        assert not (outside / "pwned").exists()
    else:
        assert str(outside / "pwned") in r.stdout and (outside / "pwned").exists()


FIND = """
import os, sys
name = sys.argv[1]
found = []
for top, dirs, files in os.walk(sys.argv[2] if len(sys.argv) > 2 else "/"):
    if top.startswith(("/proc", "/sys")):
        dirs[:] = []
        continue
    if name in files:
        path = os.path.join(top, name)
        try:
            found.append(open(path).read())
        except OSError:
            pass
print(found)
"""


@GUARDED
def test_hidden_tests_on_the_host_are_unreadable(
    make_box: BoxFactory, tmp_path: Path, guarded: bool
) -> None:
    """A grader's hidden tests in the server's temp dir: neither at their path nor by search."""
    hidden = tmp_path / "grader" / "hidden"
    hidden.mkdir(parents=True)
    secret = f"assert solve() == 42  # {uuid.uuid4().hex}"
    (hidden / "test_hidden_secret.py").write_text(secret)
    box = make_box(wall_s=30, weaken=() if guarded else {"hostfs", "userns"})
    direct = box.run(
        ["python", "-c", f"print(open({str(hidden / 'test_hidden_secret.py')!r}).read())"]
    )
    # guarded: the whole tree; weakened: the whole host would take long, its temp dir proves it
    where = "/" if guarded else str(tmp_path)
    r = box.run(["python", "-c", FIND, "test_hidden_secret.py", where])
    if guarded:
        assert direct.exit_code != 0 and secret not in direct.stdout
        assert r.stdout == "[]\n", r
    else:
        assert secret in direct.stdout and secret in r.stdout


def test_the_servers_packages_are_not_visible(box: Sandbox) -> None:
    """The interpreter's site-packages are hidden: not mcpgym, not a task set's data files."""
    code = (
        "import sys, os\n"
        "sites = [p for p in sys.path if p.endswith('site-packages')]\n"
        "print(sorted(f for p in sites if os.path.isdir(p) for f in os.listdir(p)))\n"
        "import mcpgym\n"
    )
    r = box.run(["python", "-c", code])
    assert r.stdout == "[]\n" and "ModuleNotFoundError" in r.stderr, r
    venv = Path(sys.prefix)
    r = box.run(["python", "-c", f"import os; print(os.path.exists({str(venv)!r}))"])
    assert r.stdout == "False\n"


@GUARDED
def test_another_sessions_workspace_is_unreadable(make_box: BoxFactory, guarded: bool) -> None:
    """Guarded: the other workspace is not mounted, and belongs to another host uid anyway.
    Weakened (both on the server's uid, the host's whole tree mounted): it is readable."""
    other = make_box(weaken=() if guarded else {"userns"})
    secret = uuid.uuid4().hex
    other.write_file("solution_secret.py", secret)
    box = make_box(weaken=() if guarded else {"hostfs", "userns"})
    direct = box.run(
        ["python", "-c", f"print(open({str(other.workspace / 'solution_secret.py')!r}).read())"]
    )
    if guarded:
        assert direct.exit_code != 0 and secret not in direct.stdout
        r = box.run(["python", "-c", FIND, "solution_secret.py"], limits=None)
        assert r.stdout == "[]\n", r
    else:
        assert secret in direct.stdout


@GUARDED
def test_host_processes_cannot_be_killed(
    make_box: BoxFactory, victim: subprocess.Popen[bytes], guarded: bool
) -> None:
    """kill -9 on a host pid (the server's stand-in), on the parent and on pid 1."""
    box = make_box(weaken=() if guarded else {"pidns", "userns"})
    code = (
        "import os\n"
        f"for pid in ({victim.pid}, os.getppid(), 1):\n"
        "    try:\n"
        "        os.kill(pid, 9)\n"
        "        print('killed', pid)\n"
        "    except OSError as e:\n"
        "        print('refused', pid, type(e).__name__)\n"
    )
    if guarded:
        code += "os.kill(-1, 9)\n"  # everything it may signal: only its own namespace
    r = box.run(["python", "-c", code])
    if guarded:
        assert f"refused {victim.pid}" in r.stdout and victim.poll() is None, r
        assert box.run(["python", "-c", "print('still serving')"]).stdout == "still serving\n"
    else:
        victim.wait(timeout=5)
        assert f"killed {victim.pid}" in r.stdout


DAEMON = """
import os, sys, time
token = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 256)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", token])
    os._exit(0)
os.wait()
deadline = time.time() + 5
while time.time() < deadline:
    if any(token.encode() in open(f"/proc/{p}/cmdline", "rb").read()
           for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid())):
        print("daemon up", flush=True)
        break
    time.sleep(0.01)
"""


@GUARDED
def test_a_daemon_dies_with_its_run(make_box: BoxFactory, guarded: bool) -> None:
    """Double fork + setsid + closed fds: the pid namespace's end still kills it."""
    token = "daemon-" + uuid.uuid4().hex
    box = make_box(weaken=() if guarded else {"pidns"})
    r = box.run(["python", "-c", DAEMON, token])
    assert r.stdout == "daemon up\n" and r.exit_code == 0, r
    try:
        if guarded:
            assert gone(token), describe(processes_with(token))
        else:
            assert processes_with(token)
    finally:
        kill_all(processes_with(token))


@pytest.mark.parametrize("end", ["close", "reset"])
def test_a_running_program_and_its_daemon_die_at_close(make_box: BoxFactory, end: str) -> None:
    """A run still going (it started a daemon and sleeps) when the session ends or resets."""
    token = "daemon-" + uuid.uuid4().hex
    box = make_box(wall_s=60)
    results = []
    code = DAEMON + "\ntime.sleep(60)\n"
    worker = threading.Thread(target=lambda: results.append(box.run(["python", "-c", code, token])))
    worker.start()
    deadline = time.monotonic() + 10
    while not processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.02)
    workspace = box.workspace
    try:
        assert processes_with(token)
        if end == "close":
            box.close()
            box.close()  # idempotent
        else:
            box.reset()
        worker.join(timeout=10)
        assert not worker.is_alive() and results[0].killed == "wall_time"
        assert gone(token), describe(processes_with(token))
        assert workspace.exists() is (end == "reset")
    finally:
        kill_all(processes_with(token))


def test_garbage_collection_and_exit_release_the_workspace(tmp_path: Path) -> None:
    """A sandbox nobody closed: deleted when collected, and at interpreter exit."""
    import gc

    box = Sandbox(root=tmp_path)
    box.write_file("a.py", "x = 1")
    workspace = box.workspace
    del box
    gc.collect()
    assert not workspace.exists()
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from code_gym.sandbox import Sandbox\n"
        f"box = Sandbox(root=Path({str(tmp_path)!r}))\n"
        "box.write_file('a.py', 'x = 1')\n"
        "print(box.workspace)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not Path(out.stdout.strip()).exists()


KERNEL = """
import json
res = {}
targets = [("/proc/sysrq-trigger", "w"), ("/proc/sys/vm/drop_caches", "w"),
           ("/proc/sys/kernel/hostname", "w"), ("/proc/kcore", "rb"), ("/proc/1/mem", "rb"),
           ("/sys/kernel/notes", "rb"), ("/dev/mem", "rb"), ("/dev/kmsg", "rb")]
for path, mode in targets:
    try:
        with open(path, mode) as f:
            f.write("1") if "w" in mode else f.read(16)
        res[path] = "opened"
    except OSError as e:
        res[path] = type(e).__name__
print(json.dumps(res))
"""


def test_kernel_interfaces_are_out_of_reach(box: Sandbox) -> None:
    """sysrq, sysctls, kernel memory, /sys, the init's memory: absent or refused."""
    r = box.run(["python", "-c", KERNEL])
    assert r.exit_code == 0, r
    assert "opened" not in r.stdout, r.stdout
