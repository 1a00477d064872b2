"""The bubblewrap command line of one run: namespaces, mounts, environment, limits.

The sandbox sees: `/usr` and the top-level links or directories into it (`/bin`, `/lib`, ...)
read-only; the host interpreter's prefix read-only with every `site-packages` of it hidden
(the server's own packages, and with them any hidden tests, stay invisible); a private `/proc`
of its own pid namespace, a minimal `/dev`, a private size-limited `/tmp`; the workspace
read-write at `/workspace`; the caller's `ro_mounts`. Nothing else of the host: not `/etc`
(except the loader cache), not `/root` or `/home`, not other workspaces. It has no network
(an empty network namespace), no host environment variables, and no capabilities.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxUnavailable
from .limits import Limits
from .userns import SANDBOX_ID

#: Where the workspace appears inside the sandbox (the cwd of every run).
WORKSPACE = "/workspace"
#: A file descriptor limit for every process (not in `Limits`: nothing needs to tune it).
NOFILE = 256
#: Sandbox paths a caller may not mount over.
_RESERVED = ("/", "/proc", "/dev", "/tmp", WORKSPACE, "/usr")
_TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_FIX = "apt-get install -y bubblewrap"


@dataclass(frozen=True)
class Interpreter:
    """The host's base Python (never a virtual environment's): what `python` runs inside."""

    executable: str
    prefixes: tuple[str, ...]
    site_dirs: tuple[str, ...]

    @property
    def bin_dir(self) -> str:
        """The directory of `executable`, first on the sandbox's PATH."""
        return os.path.dirname(self.executable)


@functools.cache
def host_interpreter() -> Interpreter:
    """The interpreter behind `sys.executable`, resolved through venvs and pyenv shims."""
    exe = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
    probe = (
        "import json, site, sys;"
        "print(json.dumps([sys.prefix, sys.exec_prefix, site.getsitepackages()]))"
    )
    try:
        out = subprocess.run(
            [exe, "-S", "-c", probe], env={}, capture_output=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"cannot run the host interpreter {exe}: {exc}") from exc
    prefix, exec_prefix, site_dirs = json.loads(out)
    prefixes = tuple(dict.fromkeys(os.path.realpath(p) for p in (prefix, exec_prefix)))
    sites = tuple(os.path.realpath(p) for p in site_dirs if os.path.isdir(p))
    return Interpreter(exe, prefixes, sites)


def bwrap_path() -> str:
    """The `bwrap` executable, or SandboxUnavailable with the fix."""
    found = shutil.which("bwrap") or (
        "/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None
    )
    if found is None:
        raise SandboxUnavailable(f"bubblewrap (bwrap) is not installed; fix: {_FIX}")
    return found


@functools.cache
def _util(name: str) -> str:
    """A host program's path (`chrt`, `nice`), or SandboxUnavailable with the fix."""
    found = shutil.which(name, path="/usr/bin:/bin")
    if found is None:
        package = "coreutils" if name == "nice" else "util-linux"
        raise SandboxUnavailable(f"{name} is not installed; fix: apt-get install -y {package}")
    return found


def run_class() -> str:
    """The scheduling class of sandboxed programs, from `CODE_GYM_RUN_CLASS`: `idle` (the
    default: SCHED_IDLE, below everything else on the host), `nice` (nice 19) or `normal` (nice
    0, like the server). `nice` and `normal` suit a host shared with other CPU-bound work, where
    idle sandboxes only get the CPU nobody else wants (docs/code_gym_sandbox.md)."""
    value = os.environ.get("CODE_GYM_RUN_CLASS", "idle") or "idle"
    if value not in ("idle", "nice", "normal"):
        raise ValueError(f"CODE_GYM_RUN_CLASS must be idle, nice or normal, got {value!r}")
    return value


def check_ro_mounts(ro_mounts: Mapping[Path, str]) -> list[tuple[str, str]]:
    """Validated (host, sandbox) pairs; ValueError names the bad one."""
    pairs = []
    for host, dest in ro_mounts.items():
        src = os.path.realpath(host)
        if not os.path.exists(src):
            raise ValueError(f"ro_mounts: host path {str(host)!r} does not exist")
        norm = os.path.normpath(dest) if isinstance(dest, str) else ""
        if not norm.startswith("/") or norm.startswith("//") or "\0" in norm:
            raise ValueError(f"ro_mounts: sandbox path {dest!r} must be absolute")
        if any(norm == r or (r != "/" and norm.startswith(r + "/")) for r in _RESERVED):
            raise ValueError(f"ro_mounts: sandbox path {dest!r} is reserved")
        pairs.append((src, norm))
    return pairs


def sandbox_env(interp: Interpreter, extra: Mapping[str, str] | None) -> dict[str, str]:
    """The complete environment of a run: nothing comes from the host."""
    env = {
        "PATH": f"{interp.bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for key, value in (extra or {}).items():
        if not key or "=" in key or "\0" in key or "\0" in value:
            raise ValueError(f"env: invalid variable {key!r}")
        env[key] = value
    return env


#: Guards a test may switch off through the private `weaken` hook, to prove each one matters.
GUARDS = frozenset(
    {
        "cpu",
        "memory",
        "nproc",
        "fsize",
        "output",
        "wall",
        "pidns",
        "userns",
        "net",
        "env",
        "hostfs",
        "quota",
        "priority",
    }
)


def limit_args(limits: Limits, weaken: frozenset[str] = frozenset()) -> list[str]:
    """`prlimit` options applied inside the sandbox, after the namespaces exist.

    Inside, so that RLIMIT_NPROC counts this sandbox's processes only (the kernel counts per
    user namespace and uid) and not every process of the host uid.
    """
    cpu = max(1, math.ceil(limits.cpu_s))
    mib = 1024 * 1024
    wanted = {
        "cpu": f"--cpu={cpu}:{cpu + 1}",
        "memory": f"--as={limits.memory_mb * mib}",
        "nproc": f"--nproc={limits.processes}",
        "fsize": f"--fsize={limits.file_size_mb * mib}",
    }
    if "priority" not in weaken:  # RLIMIT_NICE 0: the program cannot leave SCHED_IDLE
        wanted["priority"] = "--nice=0"
    return [arg for name, arg in wanted.items() if name not in weaken] + [
        f"--nofile={NOFILE}",
        "--core=0",
    ]


def command(
    argv: list[str],
    *,
    workspace: Path,
    limits: Limits,
    interp: Interpreter,
    userns_fd: int | None,
    ro_mounts: list[tuple[str, str]],
    env: Mapping[str, str],
    scratch: Path | None = None,
    weaken: frozenset[str] = frozenset(),
) -> list[str]:
    """The full command line: chrt, bwrap, then (privileged) setpriv, then prlimit, `argv`.

    `chrt --idle` runs the whole sandbox, bubblewrap's set-up included, in the SCHED_IDLE
    class: it only gets the CPU time the server and the host's other work leave (a server's
    event loop keeps answering while every sandbox burns CPU), and with RLIMIT_NICE 0 it
    cannot leave that class (sched(7)).

    With `userns_fd` (the server is root) bwrap enters that namespace as its uid 0 and
    `setpriv` drops to uid 1000 with every capability cleared; without it bwrap makes an
    unprivileged user namespace itself and maps the server's uid to 1000. `weaken` (tests
    only) leaves out the named guards.
    """
    cls = "normal" if "priority" in weaken else run_class()
    cmd = {"idle": [_util("chrt"), "--idle", "0"], "nice": [_util("nice"), "-n", "19"]}.get(cls, [])
    cmd += [bwrap_path()]
    if userns_fd is not None:
        cmd += ["--userns", str(userns_fd), "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        cmd += ["--unshare-user", "--uid", str(SANDBOX_ID), "--gid", str(SANDBOX_ID)]
        cmd += ["--disable-userns", "--cap-drop", "ALL"]
    unshare = {"pidns": "--unshare-pid", "net": "--unshare-net"}
    cmd += [flag for name, flag in unshare.items() if name not in weaken]
    cmd += ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    cmd += ["--die-with-parent", "--new-session"]
    if "env" not in weaken:
        cmd += ["--clearenv"]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    cmd += _mounts(workspace, limits, interp, ro_mounts, scratch, host_fs="hostfs" in weaken)
    if userns_fd is not None:
        ident = str(SANDBOX_ID)
        cmd += ["setpriv", "--reuid", ident, "--regid", ident, "--clear-groups"]
        cmd += ["--inh-caps=-all", "--bounding-set=-all", "--"]
    cmd += ["prlimit", *limit_args(limits, weaken), "--"]
    program = list(argv)
    if program and program[0] in ("python", "python3"):
        program[0] = interp.executable
    return cmd + program


def _mounts(
    workspace: Path,
    limits: Limits,
    interp: Interpreter,
    ro_mounts: list[tuple[str, str]],
    scratch: Path | None,
    *,
    host_fs: bool,
) -> list[str]:
    ws = ["--bind", str(workspace), WORKSPACE, "--chdir", WORKSPACE]
    if host_fs:  # the weakened test mode: the host's whole tree, writable
        cmd = ["--bind", "/", "/", "--proc", "/proc", "--dev", "/dev", *ws]
        return cmd + [arg for src, dest in ro_mounts for arg in ("--ro-bind", src, dest)]
    cmd = ["--ro-bind", "/usr", "/usr"]
    for top in _TOP_LINKS:
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    cmd += ["--perms", "0755", "--dir", "/etc"]
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for prefix in interp.prefixes:
        if prefix != "/usr" and not prefix.startswith("/usr/"):
            # bwrap would copy a 0700 parent such as /root: the sandbox user could not pass
            for parent in reversed(Path(prefix).parents[:-1]):
                cmd += ["--perms", "0755", "--dir", str(parent)]
            cmd += ["--ro-bind", prefix, prefix]
    for site in interp.site_dirs:
        cmd += ["--perms", "0555", "--tmpfs", site, "--remount-ro", site]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    if scratch is not None:  # in the sandbox's quota tmpfs: bytes and inodes are bounded
        cmd += ["--bind", str(scratch / "tmp"), "/tmp", "--bind", str(scratch / "shm"), "/dev/shm"]
    else:
        size = str(limits.workspace_mb * 1024 * 1024)
        for tmp in ("/tmp", "/dev/shm"):
            cmd += ["--perms", "1777", "--size", size, "--tmpfs", tmp]
    cmd += ws
    for src, dest in ro_mounts:
        cmd += ["--ro-bind", src, dest]
    return cmd
