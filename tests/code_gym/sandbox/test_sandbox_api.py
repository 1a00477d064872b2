"""The sandbox's contract: the API Code Gym builds on, its errors, sync and async runs."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from pathlib import Path

import pytest

import code_gym.sandbox as sandbox_pkg
from code_gym.sandbox import (
    Limits,
    RunResult,
    Sandbox,
    SandboxClosed,
    SandboxUnavailable,
    WorkspacePathError,
)
from code_gym.sandbox import bwrap as bwrap_mod
from sandbox_helpers import BoxFactory, gone, kill_all, processes_with

pytestmark = pytest.mark.code


def test_exported_names() -> None:
    assert sorted(sandbox_pkg.__all__) == sorted(
        name for name in dir(sandbox_pkg) if not name.startswith("_") and name[0].isupper()
    )
    assert sandbox_pkg.KILL_REASONS == ("wall_time", "cpu_time", "memory", "output", "processes")


def test_limits_and_result_shapes() -> None:
    assert Limits() == Limits(10, 20, 512, 64, 16, 65_536, 64)
    assert [f.name for f in dataclasses.fields(RunResult)] == [
        "stdout", "stderr", "exit_code", "duration_s", "stdout_truncated", "stderr_truncated",
        "killed",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="wall_s"):
        Limits(wall_s=0)
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=-1)
    with pytest.raises(TypeError):
        Limits(processes="64")  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Limits().cpu_s = 1  # type: ignore[misc]


def test_a_run_and_its_result(box: Sandbox) -> None:
    r = box.run(["python", "-c", "import os, sys; print(os.getcwd()); sys.exit(3)"])
    assert r.stdout == "/workspace\n" and r.exit_code == 3 and r.killed is None
    assert not r.stdout_truncated and 0 < r.duration_s < 10
    r = box.run(["python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
    assert r.exit_code == 128 + 15 and r.killed is None
    r = box.run(["/bin/sh", "-c", "printf '\\377ok'; echo err >&2"])
    assert r.stdout == "\ufffdok" and r.stderr == "err\n"


def test_stdin_env_and_ro_mounts(box: Sandbox, tmp_path: Path) -> None:
    assert box.run(["python", "-c", "print(input()[::-1])"], stdin="abc").stdout == "cba\n"
    big = "x" * 1_000_000  # more than a pipe buffer: written as the program reads
    r = box.run(["python", "-c", "import sys; print(len(sys.stdin.read()))"], stdin=big)
    assert r.stdout == "1000000\n"
    r = box.run(["python", "-c", "import os; print(os.environ['TASK'])"], env={"TASK": "t1"})
    assert r.stdout == "t1\n"
    data = tmp_path / "grader"
    data.mkdir()
    (data / "check.py").write_text("print('graded')")
    mounts = {data: "/grader"}
    r = box.run(["python", "/grader/check.py"], ro_mounts=mounts)
    assert r.stdout == "graded\n", r
    r = box.run(["python", "-c", "open('/grader/x', 'w')"], ro_mounts=mounts)
    assert "Read-only file system" in r.stderr
    assert box.run(["ls", "/grader"]).exit_code != 0  # for that run only


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"argv": []}, ValueError),
        ({"argv": "python"}, ValueError),
        ({"argv": ["python", 1]}, ValueError),
        ({"argv": ["python", "-c", "print(1)\0"]}, ValueError),
        ({"argv": ["true"], "stdin": b"bytes"}, TypeError),
        ({"argv": ["true"], "env": {"A=B": "x"}}, ValueError),
        ({"argv": ["true"], "ro_mounts": {Path("/nonexistent-mcpgym"): "/x"}}, ValueError),
        ({"argv": ["true"], "ro_mounts": {Path("/usr"): "/workspace/x"}}, ValueError),
        ({"argv": ["true"], "ro_mounts": {Path("/usr"): "relative"}}, ValueError),
        ({"argv": ["true"], "limits": {"wall_s": 1}}, TypeError),
    ],
)
def test_bad_arguments_are_clear_errors(box: Sandbox, kwargs: dict, error: type) -> None:
    kwargs = dict(kwargs)  # the parameter is shared by the cold and the warm run
    argv = kwargs.pop("argv")
    with pytest.raises(error):
        box.run(argv, **kwargs)


def test_a_missing_program_is_a_result_not_a_crash(box: Sandbox) -> None:
    r = box.run(["no-such-program-mcpgym"])
    assert r.exit_code == 127 and "No such file" in r.stderr


def test_missing_bubblewrap_raises_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(bwrap_mod.shutil, "which", lambda name: None)
    monkeypatch.setattr(bwrap_mod.os, "access", lambda path, mode: False)
    with pytest.raises(SandboxUnavailable, match="apt-get install -y bubblewrap"):
        Sandbox(root=tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="backend"):
        Sandbox(backend="none", root=tmp_path)


def test_closed_sandbox_refuses_everything(make_box: BoxFactory) -> None:
    box = make_box()
    box.close()
    assert box.closed and not box.workspace.exists()
    for call in (
        lambda: box.run(["true"]),
        lambda: box.reset(),
        lambda: box.read_file("a"),
        lambda: box.write_file("a", ""),
        lambda: box.list_files(),
    ):
        with pytest.raises(SandboxClosed):
            call()
    box.close()


def test_reset_empties_the_workspace_and_the_sandbox_stays_usable(box: Sandbox) -> None:
    box.write_file("a/b.py", "x")
    box.run(["python", "-c", "open('c', 'w').write('y')"])
    box.reset()
    assert box.list_files() == []
    assert box.run(["python", "-c", "print('again')"]).stdout == "again\n"


def test_a_workspace_path_error_is_a_value_error() -> None:
    err = WorkspacePathError("../x", "escape", "'..' is refused")
    assert isinstance(err, ValueError) and err.reason == "escape" and err.path == "../x"


def test_the_unprivileged_command_path_runs(make_box: BoxFactory) -> None:
    """bwrap's own user namespace (how a non-root server runs): isolation still applies."""
    box = make_box(weaken={"userns"})
    r = box.run(["python", "-c", "import os; print(os.getuid(), os.listdir('/'))"])
    assert r.stdout.startswith("1000 ") and "workspace" in r.stdout, r


async def test_arun_does_not_block_the_event_loop(make_box: BoxFactory) -> None:
    boxes = [make_box() for _ in range(4)]
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    tick = asyncio.create_task(ticker())
    start = time.monotonic()
    code = "import time; time.sleep(0.6); print('done')"
    results = await asyncio.gather(*(b.arun(["python", "-c", code]) for b in boxes))
    elapsed = time.monotonic() - start
    tick.cancel()
    assert [r.stdout for r in results] == ["done\n"] * 4
    assert elapsed < 6.0 and ticks >= 30, (elapsed, ticks)
    r = await boxes[0].arun(["python", "-c", "print(input())"], stdin="via stdin")
    assert r.stdout == "via stdin\n"


async def test_arun_limits_and_cancellation(make_box: BoxFactory) -> None:
    box = make_box(wall_s=1, output_bytes=100)
    r = await box.arun(["python", "-c", "import time; time.sleep(5)"])
    assert r.killed == "wall_time" and r.exit_code is None
    flood = ["python", "-c", "while True: print('x' * 50)"]
    r = await box.arun(flood, limits=Limits(wall_s=20, output_bytes=100))  # a slow start is fine
    assert r.killed == "output" and len(r.stdout) == 100 and r.stdout_truncated
    token = "cancel-" + uuid.uuid4().hex
    task = asyncio.create_task(
        box.arun(["python", "-c", "import time; time.sleep(30)", token], limits=Limits(wall_s=60))
    )
    for _ in range(250):
        if processes_with(token):
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    try:
        assert gone(token)
    finally:
        kill_all(processes_with(token))


def test_per_run_limits_override_the_sandbox_default(box: Sandbox) -> None:
    r = box.run(["python", "-c", "import time; time.sleep(2)"], limits=Limits(wall_s=0.5))
    assert r.killed == "wall_time" and r.duration_s < 3


def test_a_root_that_may_not_mount_falls_back_to_the_after_run_quota(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Root in a container without CAP_SYS_ADMIN: no tmpfs, the quota checked after each run."""
    from code_gym.sandbox import workspace

    def refuse(self: workspace.Workspace) -> None:
        raise PermissionError(1, "mount: Operation not permitted")

    monkeypatch.setattr(workspace.Workspace, "_mount", refuse)
    with Sandbox(limits=Limits(workspace_mb=1, file_size_mb=2), root=tmp_path) as box:
        r = box.run(["python", "-c", "open('big', 'wb').write(b'x' * 1_500_000); print('ok')"])
        assert r.stdout == "ok\n" and "over its quota: emptied" in r.stderr, r
        assert box.list_files() == []
