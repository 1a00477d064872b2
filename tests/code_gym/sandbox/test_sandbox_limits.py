"""Resource attacks: each runs guarded (must fail) and with its guard off (must then succeed).

The weakened runs prove the guard is what stops the attack, not some accident of the test.
"""

from __future__ import annotations

import pytest

from code_gym.sandbox import Sandbox
from sandbox_helpers import BoxFactory

pytestmark = pytest.mark.code

GUARDED = pytest.mark.parametrize("guarded", [True, False], ids=["guarded", "weakened"])

FORK_BOMB = """
import os, sys, time
n = 0
try:
    for _ in range(300):
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
finally:
    print("forked", n, flush=True)
"""


@GUARDED
def test_fork_bomb_stops_at_the_process_limit(make_box: BoxFactory, guarded: bool) -> None:
    box = make_box(processes=32, wall_s=20, weaken=() if guarded else {"nproc"})
    r = box.run(["python", "-c", FORK_BOMB])
    forked = int(r.stdout.split()[-1])
    if guarded:
        assert forked < 32 and r.exit_code != 0 and r.killed == "processes", r
    else:
        assert forked == 300, r


def test_shell_fork_bomb_ends_at_the_wall_time(box: Sandbox) -> None:
    """The classic `:(){ :|:& };:` — fork fails at the limit, the loop lasts until the wall."""
    r = box.run(["/bin/sh", "-c", "b() { b | b & }; b; sleep 30"], limits=_short(box, wall_s=2))
    assert r.killed == "wall_time" and r.exit_code is None
    assert r.duration_s < 8


@GUARDED
def test_infinite_output_is_cut_and_the_run_killed(make_box: BoxFactory, guarded: bool) -> None:
    """Guarded: at most `output_bytes` kept, the writer killed at once. Weakened: 20 MB arrive."""
    box = make_box(output_bytes=4096, wall_s=10, weaken=() if guarded else {"output"})
    flood = "import sys\nfor _ in range(20_000): sys.stdout.write('x' * 1000)\n"
    r = box.run(["python", "-c", flood])
    if guarded:
        assert len(r.stdout.encode()) == 4096 and r.stdout_truncated
        assert r.killed == "output" and r.exit_code is None and r.duration_s < 8
    else:
        assert len(r.stdout) == 20_000_000 and not r.stdout_truncated and r.exit_code == 0


def test_stderr_flood_is_cut_too(make_box: BoxFactory) -> None:
    box = make_box(output_bytes=1000, wall_s=10)
    r = box.run(["python", "-c", "import sys\nwhile True: sys.stderr.write('e' * 100)"])
    assert len(r.stderr.encode()) == 1000 and r.stderr_truncated and r.killed == "output"


@GUARDED
def test_memory_balloon_fails(make_box: BoxFactory, guarded: bool) -> None:
    box = make_box(memory_mb=128, wall_s=20, weaken=() if guarded else {"memory"})
    r = box.run(["python", "-c", "x = bytearray(400 * 1024 * 1024); print('allocated')"])
    if guarded:
        assert "allocated" not in r.stdout and r.killed == "memory", r
    else:
        assert r.stdout == "allocated\n", r


@GUARDED
def test_busy_loop_is_stopped_by_the_cpu_limit(make_box: BoxFactory, guarded: bool) -> None:
    """Guarded: SIGXCPU after 1 s of CPU (the wall limit is far: a loaded machine may take a
    while to give it that second). Weakened: only the wall-time kill stops it."""
    box = make_box(cpu_s=1, wall_s=30 if guarded else 3, weaken=() if guarded else {"cpu"})
    r = box.run(["python", "-c", "while True: pass"])
    if guarded:
        assert r.killed == "cpu_time" and r.exit_code == 128 + 24, r
    else:
        assert r.killed == "wall_time" and r.duration_s >= 3, r


@GUARDED
def test_sleep_is_stopped_by_the_wall_time(make_box: BoxFactory, guarded: bool) -> None:
    box = make_box(wall_s=1, weaken=() if guarded else {"wall"})
    r = box.run(["python", "-c", "import time; time.sleep(3); print('woke')"])
    if guarded:
        assert r.killed == "wall_time" and r.exit_code is None and 1 <= r.duration_s < 4
        assert r.stdout == ""
    else:
        assert r.stdout == "woke\n" and r.killed is None


def test_partial_output_survives_a_wall_time_kill(make_box: BoxFactory) -> None:
    box = make_box(wall_s=1)
    r = box.run(["python", "-c", "import time; print('started'); time.sleep(5)"])
    assert r.killed == "wall_time" and r.stdout == "started\n"


@GUARDED
def test_huge_file_stops_at_the_file_size_limit(make_box: BoxFactory, guarded: bool) -> None:
    box = make_box(file_size_mb=4, workspace_mb=64, weaken=() if guarded else {"fsize"})
    write = "open('big', 'wb').write(b'x' * (12 * 1024 * 1024)); print('written')"
    r = box.run(["python", "-c", write])
    if guarded:
        assert "written" not in r.stdout and "File too large" in r.stderr, r
        assert (box.workspace / "big").stat().st_size <= 4 * 1024 * 1024
    else:
        assert r.stdout == "written\n" and (box.workspace / "big").stat().st_size == 12 << 20


FILL = """
import os
done = 0
try:
    for i in range(40):
        with open(f"f{i}", "wb") as f:
            f.write(os.urandom(2 * 1024 * 1024))
        done += 2
finally:
    print(done, flush=True)
"""


@GUARDED
def test_filling_the_workspace_stops_at_its_quota(make_box: BoxFactory, guarded: bool) -> None:
    """40 files of 2 MB each (each under the file-size limit) into a 16 MB workspace."""
    box = make_box(workspace_mb=16, file_size_mb=4, weaken=() if guarded else {"quota"})
    r = box.run(["python", "-c", FILL])
    written = int(r.stdout.split()[-1])
    if guarded:
        assert written <= 16 and "No space left on device" in r.stderr, r
    else:
        assert written == 80, r


def test_filling_tmp_stops_at_its_quota(make_box: BoxFactory) -> None:
    box = make_box(workspace_mb=8, file_size_mb=4)
    r = box.run(["python", "-c", FILL.replace('f"f{i}"', 'f"/tmp/f{i}"')])
    assert int(r.stdout.split()[-1]) <= 8 and "No space left on device" in r.stderr


INODES = """
import os, sys
n = 0
try:
    for i in range(int(sys.argv[2])):
        open(os.path.join(sys.argv[1], f"e{i}"), "w").close()
        n += 1
finally:
    print(n, flush=True)
"""


@GUARDED
@pytest.mark.parametrize("where", ["/tmp", "/dev/shm", "/workspace"])
def test_an_inode_bomb_stops_at_the_quota(make_box: BoxFactory, guarded: bool, where: str) -> None:
    """Empty files cost no bytes but kernel memory: the quota tmpfs bounds inodes too (256 per
    MB). Weakened (no quota tmpfs): 20,000 empty files where 8 MB allow 2,048."""
    box = make_box(workspace_mb=8, wall_s=30, weaken=() if guarded else {"quota"})
    r = box.run(["python", "-c", INODES, where, "20000"])
    made = int(r.stdout.split()[-1])
    if guarded:
        assert made <= 8 * 256 and "No space left on device" in r.stderr, r
    else:
        assert made == 20000, r


def test_tmp_is_fresh_for_every_run_and_shm_works(box: Sandbox) -> None:
    r = box.run(["python", "-c", "import os; print(os.listdir('/tmp')); open('/tmp/x', 'w')"])
    assert r.stdout == "[]\n", r
    r = box.run(["python", "-c", "import os; print(os.listdir('/tmp'))"])
    assert r.stdout == "[]\n", r
    code = (
        "import multiprocessing as mp\n"
        "if __name__ == '__main__':\n"
        "    with mp.Pool(2) as pool:\n"
        "        print(pool.map(abs, [-1, -2]))\n"
    )
    box.write_file("pool.py", code)
    r = box.run(["python", "pool.py"])
    assert r.stdout == "[1, 2]\n", r


def _short(box: Sandbox, **changes: float):
    from dataclasses import replace

    return replace(box.limits, **changes)


PRIORITY = """
import os
print(os.sched_getscheduler(0) == os.SCHED_IDLE)
attempts = (
    lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)),
    lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0)),
    lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)),
    lambda: os.setpriority(os.PRIO_PROCESS, 0, -5),
    lambda: os.nice(-1),
)
escaped = 0
for attempt in attempts:
    try:
        attempt()
        escaped += 1
    except OSError:
        pass
pid = os.fork()  # a child, and a thread of it, inherit the class
if pid == 0:
    os._exit(0 if os.sched_getscheduler(0) == os.SCHED_IDLE else 1)
print(escaped, os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@GUARDED
def test_a_cpu_hog_runs_below_the_server_and_cannot_rise(
    make_box: BoxFactory, guarded: bool
) -> None:
    """Every sandboxed process is SCHED_IDLE (the server's event loop, SCHED_OTHER, always
    wins the CPU from it); no attempt to raise its class or nice value succeeds."""
    box = make_box(wall_s=10, weaken=() if guarded else {"priority"})
    r = box.run(["python", "-c", PRIORITY])
    assert r.exit_code == 0, r
    idle, rest = r.stdout.split("\n", 1)
    if guarded:
        assert (idle, rest.split()) == ("True", ["0", "0"]), r
    else:
        assert idle == "False" and rest.split()[1] == "1", r
