"""A server that is not root: bubblewrap's own user namespace, limits set inside it.

Run for real as `nobody` with Debian's /usr/bin/python3 (the package needs only the standard
library), so the unprivileged path is exercised, not just built.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.code

ROOT = Path(__file__).resolve().parents[3]
SYSTEM_PYTHON = Path("/usr/bin/python3")

PROGRAM = """
import json, os
from code_gym.sandbox import Limits, Sandbox

box = Sandbox(limits=Limits(processes=16, wall_s=10))
fork = '''
import os, time
n = 0
try:
    for _ in range(100):
        if os.fork() == 0:
            time.sleep(1)
            os._exit(0)
        n += 1
finally:
    print(n)
'''
def py(code, **kw):
    return box.run(["python", "-c", code], **kw)


out = {
    "whoami": py("import os; print(os.getuid(), sorted(os.listdir('/')))").stdout,
    "forks": py(fork).stdout,
    "env": py("import os; print(sorted(os.environ))").stdout,
    "net": py("import socket; print(sorted(n for _, n in socket.if_nameindex()))").stdout,
    "sleep": py("import time; time.sleep(5)", limits=Limits(wall_s=0.5)).killed,
}
box.write_file("a.py", "print('from a')")
out["file"] = box.run(["python", "a.py"]).stdout
workspace = box.workspace
box.close()
out["deleted"] = not workspace.exists()
print(json.dumps(out))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become nobody")
@pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="needs Debian's /usr/bin/python3")
def test_the_sandbox_works_for_an_unprivileged_server(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    tmp_path.chmod(0o777)
    cmd = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    out = subprocess.run(
        [*cmd, str(SYSTEM_PYTHON), "-c", PROGRAM],
        env={**env, "TMPDIR": str(tmp_path)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert got["whoami"].startswith("1000 ") and "workspace" in got["whoami"]
    assert "root" not in got["whoami"] and "home" not in got["whoami"]
    assert int(got["forks"]) < 16
    assert "HOME" in got["env"] and "PYTHONPATH" not in got["env"]
    assert got["net"] == "['lo']\n"
    assert got["sleep"] == "wall_time"
    assert got["file"] == "from a\n" and got["deleted"]
