"""The host-side file operations against a workspace the sandbox has booby-trapped.

Each trap is planted by a program in the sandbox, then read or written by the server's own
code — the path where a symlink would carry the server (root) outside the workspace.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest

from code_gym.sandbox import Sandbox, WorkspacePathError
from sandbox_helpers import BoxFactory

pytestmark = pytest.mark.code


def plant(box: Sandbox, code: str) -> None:
    r = box.run(["python", "-c", "import os\n" + code])
    assert r.exit_code == 0, r


@pytest.fixture
def host_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("host secret")
    return secret


def test_a_symlink_to_a_host_file_is_refused(box: Sandbox, host_secret: Path) -> None:
    """The guard is the O_NOFOLLOW walk: a naive `Path.read_text` (the unguarded twin) follows
    the link and leaks the host file."""
    plant(box, f"os.symlink({str(host_secret)!r}, 'solution.py')")
    with pytest.raises(WorkspacePathError) as err:
        box.read_file("solution.py")
    assert err.value.reason == "escape"
    assert (box.workspace / "solution.py").read_text() == "host secret"  # unguarded: leaks


def test_a_symlink_to_etc_shadow_and_to_another_workspace(
    make_box: BoxFactory, box: Sandbox
) -> None:
    other = make_box()
    other.write_file("answer.py", "other session")
    plant(box, f"os.symlink('/etc/shadow', 'a')\nos.symlink({str(other.workspace)!r}, 'b')")
    for rel in ("a", "b/answer.py", "/workspace/b/answer.py"):
        with pytest.raises(WorkspacePathError) as err:
            box.read_file(rel)
        assert err.value.reason == "escape", rel
    assert box.list_files() == []


def test_a_directory_symlink_on_the_way_is_refused(box: Sandbox, host_secret: Path) -> None:
    plant(box, f"os.symlink({str(host_secret.parent)!r}, 'pkg')")
    with pytest.raises(WorkspacePathError, match="not a directory"):
        box.read_file("pkg/secret.txt")
    with pytest.raises(WorkspacePathError):
        box.write_file("pkg/new.py", "x")
    assert not (host_secret.parent / "new.py").exists()


def test_writing_through_a_planted_symlink_does_not_touch_the_host(
    box: Sandbox, host_secret: Path
) -> None:
    plant(box, f"os.symlink({str(host_secret)!r}, 'solution.py')")
    with pytest.raises(WorkspacePathError) as err:
        box.write_file("solution.py", "overwritten")
    assert err.value.reason == "escape"
    assert host_secret.read_text() == "host secret"


def test_a_hard_link_out_of_the_workspace_cannot_be_made(box: Sandbox) -> None:
    """Were it possible, `write_file` on it would rewrite the interpreter's own file."""
    import os as host_os

    target = host_os.__file__
    r = box.run(["python", "-c", f"import os\nos.link({target!r}, 'os_link.py')"])
    assert r.exit_code != 0 and "Invalid cross-device link" in r.stderr, r


def test_a_hard_link_inside_the_workspace_is_not_written_through(box: Sandbox) -> None:
    box.write_file("tests/test_visible.py", "assert True")
    plant(box, "os.link('tests/test_visible.py', 'alias.py')")
    with pytest.raises(WorkspacePathError, match="hard links"):
        box.write_file("alias.py", "assert False")
    assert box.read_file("tests/test_visible.py") == "assert True"


def test_a_planted_fifo_neither_hangs_a_read_nor_a_write(box: Sandbox) -> None:
    plant(box, "os.mkfifo('solution.py')\nos.mkfifo('out.txt')")
    done = threading.Event()

    def attempt() -> None:
        for op in (lambda: box.read_file("solution.py"), lambda: box.write_file("out.txt", "x")):
            with pytest.raises(WorkspacePathError) as err:
                op()
            assert err.value.reason == "not_file"
        done.set()

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(timeout=5)
    assert done.is_set(), "a host-side file operation hung on a FIFO"


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "/etc/passwd", "", "a\0b", "/workspace"])
def test_escaping_or_invalid_paths_are_refused(box: Sandbox, rel: str) -> None:
    with pytest.raises(WorkspacePathError):
        box.read_file(rel)
    with pytest.raises(WorkspacePathError):
        box.write_file(rel, "x")


def test_round_trip_nested_paths_and_the_workspace_prefix(box: Sandbox) -> None:
    box.write_file("pkg/sub/mod.py", "def f():\n    return 1\n")
    box.write_file("/workspace/main.py", "from pkg.sub.mod import f\nprint(f())\n")
    assert box.read_file("main.py").startswith("from pkg")
    assert box.list_files() == ["main.py", "pkg/sub/mod.py"]
    r = box.run(["python", "main.py"])
    assert r.stdout == "1\n", r
    box.write_file("main.py", "print(2)\n")  # replace
    assert box.run(["python", "main.py"]).stdout == "2\n"
    plant(box, "open('made_inside.txt', 'w').write('inside')\nos.symlink('main.py', 'link.py')")
    assert box.read_file("made_inside.txt") == "inside"
    assert "link.py" not in box.list_files()


def test_the_sandbox_can_edit_files_the_host_wrote(box: Sandbox) -> None:
    box.write_file("pkg/data.txt", "v1")
    plant(box, "open('pkg/data.txt', 'w').write('v2')\nos.remove('pkg/data.txt')\nos.rmdir('pkg')")
    assert box.list_files() == []


def test_size_limits(make_box: BoxFactory) -> None:
    box = make_box(file_size_mb=1, workspace_mb=2)
    with pytest.raises(WorkspacePathError) as err:
        box.write_file("big.bin", b"x" * (1024 * 1024 + 1))
    assert err.value.reason == "too_large"
    box.write_file("a.bin", b"x" * (1024 * 1024 - 1))
    with pytest.raises(WorkspacePathError, match="bytes"):
        box.read_file("a.bin", max_bytes=1000)
    box.write_file("b.bin", b"y" * (900 * 1024))
    with pytest.raises(WorkspacePathError) as err:
        box.write_file("c.bin", b"z" * (900 * 1024))  # the workspace (2 MB) is full
    assert err.value.reason == "too_large"


def test_missing_and_directory(box: Sandbox) -> None:
    box.write_file("d/x.py", "")
    with pytest.raises(WorkspacePathError) as err:
        box.read_file("nope.py")
    assert err.value.reason == "not_found"
    with pytest.raises(WorkspacePathError) as err:
        box.read_file("d")
    assert err.value.reason == "not_file"
    with pytest.raises(WorkspacePathError) as err:
        box.read_file("missing_dir/x.py")
    assert err.value.reason == "not_found"


SWAPPER = """
import os, sys, time
secret_file, secret_dir = sys.argv[1], sys.argv[2]
os.makedirs("real", exist_ok=True)
open("real/solution.py", "w").write("workspace content")
deadline = time.time() + float(sys.argv[3])
while time.time() < deadline:
    # the file itself and a directory on its path flip between real and a link to the host
    pairs = (("solution.py", "real/solution.py", secret_file), ("d", "real", secret_dir))
    for name, good, bad in pairs:
        for target in (bad, os.path.abspath(good)):
            try:
                os.symlink(target, name + ".new")
                os.rename(name + ".new", name)
            except OSError:
                pass
"""


def test_a_symlink_race_never_leads_a_read_outside(box: Sandbox, host_secret: Path) -> None:
    """While a program swaps links in and out as fast as it can, the host keeps reading: every
    read is refused or reads the workspace — never the secret. The unguarded twin (a plain
    `open` of the same path) does read the secret, which shows the race is real."""
    box.write_file("real/solution.py", "workspace content")
    secret_dir = str(host_secret.parent)
    results: list[object] = []
    worker = threading.Thread(
        target=lambda: results.append(
            box.run(["python", "-c", SWAPPER, str(host_secret), secret_dir, "3"])
        )
    )
    worker.start()
    seen: set[str] = set()
    naive: set[str] = set()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        for rel in ("solution.py", "d/secret.txt", "d/solution.py"):
            try:
                seen.add(box.read_file(rel))
            except WorkspacePathError as exc:
                seen.add(exc.reason)
            with contextlib.suppress(OSError):
                naive.add((box.workspace / rel).read_text())
    worker.join()
    assert "host secret" not in seen, seen
    assert "escape" in seen and "host secret" in naive, (seen, naive)
