"""`Sandbox`: one session's workspace and the isolated runs in it."""

from __future__ import annotations

import os
import signal
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path

from . import bwrap
from .errors import SandboxClosed, SandboxUnavailable
from .gate import RUN_GATE
from .limits import Limits, RunResult
from .process import Job, Outcome, drive_async, drive_sync
from .spare import LAUNCHER, LAUNCHER_DEST, Spare, request
from .userns import UserNamespace, pick_host_id
from .workspace import Workspace

_NO_MOUNTS: Mapping[Path, str] = {}
_DEFAULT_LIMITS = Limits()
_PROBED: set[tuple[bool, frozenset[str]]] = set()
_SIGNALLED = 128  # bwrap reports a signal N as exit status 128 + N


class Sandbox:
    """An isolated workspace for untrusted programs; one per session.

    Every run is a fresh bubblewrap sandbox (own pid, network, mount, ipc and uts namespaces,
    no capabilities, an empty environment) with `workspace` at `/workspace` as its cwd; when a
    run ends, everything it started is killed. `close()` (also at garbage collection and
    interpreter exit) kills what still runs and deletes the workspace.

    >>> with Sandbox() as box:  # doctest: +SKIP
    ...     box.write_file("hello.py", "print('hi')")
    ...     box.run(["python", "hello.py"]).stdout
    'hi\\n'
    """

    workspace: Path

    def __init__(
        self,
        *,
        limits: Limits = _DEFAULT_LIMITS,
        backend: str = "auto",
        root: Path | None = None,
        warm_mounts: Mapping[Path, str] | None = None,
        _weaken: frozenset[str] = frozenset(),
    ) -> None:
        if backend not in ("auto", "bwrap"):
            raise ValueError(f"backend must be 'auto' or 'bwrap', got {backend!r}")
        if not isinstance(limits, Limits):
            raise TypeError("limits must be a Limits")
        self.limits = limits
        self.backend = "bwrap"
        self._jobs: set[Job] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._spare: Spare | None = None
        #: The `ro_mounts` a spare is started with (None: no spare, every run starts cold).
        self._warm = None if warm_mounts is None else bwrap.check_ro_mounts(warm_mounts)
        if not _weaken <= bwrap.GUARDS:
            raise ValueError(f"unknown guards: {sorted(_weaken - bwrap.GUARDS)}")
        # Tests only: switch guards off to prove that each one stops its attack.
        self._weaken = frozenset(_weaken)
        self._interp = bwrap.host_interpreter()
        bwrap.bwrap_path()
        privileged = os.geteuid() == 0
        self._userns: UserNamespace | None = None
        owner = os.geteuid()
        if privileged and "userns" not in self._weaken:
            self._userns = UserNamespace(pick_host_id())
            owner = self._userns.host_id
        try:
            self._ws = Workspace(
                root=root,
                owner=owner,
                quota_mb=limits.workspace_mb,
                privileged=privileged and "quota" not in self._weaken,
            )
        except BaseException:
            if self._userns is not None:
                self._userns.close()
            raise
        self.workspace = self._ws.path
        self._finalizer = weakref.finalize(self, _release, self._jobs, self._ws, self._userns)
        self._probe()
        self._refill()

    def _probe(self) -> None:
        # Once per process and mode: whether bubblewrap works here does not change.
        key = (self._userns is None, self._weaken)
        if key in _PROBED:
            return
        out = self._execute(["/bin/true"], None, Limits(wall_s=10), _NO_MOUNTS, None)
        if out.status != 0:
            self.close()
            detail = out.stderr.decode(errors="replace").strip()
            raise SandboxUnavailable(
                f"bubblewrap cannot create a sandbox here ({detail}); fix: "
                "apt-get install -y bubblewrap, and allow user namespaces "
                "(sysctl -w kernel.unprivileged_userns_clone=1 user.max_user_namespaces=15000)"
            )
        _PROBED.add(key)

    # -- runs ---------------------------------------------------------------------------------

    def run(
        self,
        argv: list[str],
        *,
        stdin: str | None = None,
        limits: Limits | None = None,
        ro_mounts: Mapping[Path, str] = _NO_MOUNTS,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        """Run `argv` in the sandbox and wait for it; `argv[0]` "python" is the interpreter.

        `ro_mounts` maps host paths to sandbox paths mounted read-only for this run only;
        `env` adds variables to the sandbox's own (nothing comes from the host). The run waits
        for a slot of the server's `RUN_GATE` first (`SandboxBusy` when none comes in time).
        """
        lim = limits or self.limits
        self._check_open()
        with RUN_GATE.slot():
            job, scratch = self._take(argv, stdin, lim, ro_mounts, env)
            try:
                out = drive_sync(job)
            finally:
                self._forget(job, scratch)
            return self._result(out, lim)

    async def arun(
        self,
        argv: list[str],
        *,
        stdin: str | None = None,
        limits: Limits | None = None,
        ro_mounts: Mapping[Path, str] = _NO_MOUNTS,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        """`run` on the event loop: the wait never blocks it (cancelling kills the run)."""
        lim = limits or self.limits
        self._check_open()
        async with RUN_GATE.aslot():
            job, scratch = self._take(argv, stdin, lim, ro_mounts, env)
            try:
                out = await drive_async(job)
            finally:
                self._forget(job, scratch)
            return self._result(out, lim)

    def _take(
        self,
        argv: list[str],
        stdin: str | None,
        lim: Limits,
        ro_mounts: Mapping[Path, str],
        env: Mapping[str, str] | None,
    ) -> tuple[Job, Path | None]:
        """The run's job: the spare when the run fits it (spare.py), else a cold start."""
        head = request(list(argv)) if isinstance(argv, list | tuple) else None
        fits = head is not None and lim == self.limits and not env
        with self._lock:
            spare = self._spare
            if spare is not None and fits and bwrap.check_ro_mounts(ro_mounts) == self._warm:
                self._spare = None
            else:
                spare = None
        if spare is not None:
            assert head is not None
            data = head + (stdin.encode() if isinstance(stdin, str) else b"")
            if not isinstance(stdin, str | None):
                self._forget(spare.job, spare.scratch, kill=True)
                raise TypeError("stdin must be a str or None")
            if spare.job.hand_off(data):
                return spare.job, spare.scratch
            self._forget(spare.job, spare.scratch, kill=True)  # it died waiting: start cold
        scratch = self._ws.new_scratch()
        try:
            return self._start(argv, stdin, lim, ro_mounts, env, scratch), scratch
        except BaseException:
            self._ws.drop_scratch(scratch)
            raise

    def _refill(self) -> None:
        """Start the next spare, if this sandbox keeps one and has none."""
        if self._warm is None or self._spare is not None or self._closed:
            return
        mounts = {**dict(self._warm), str(LAUNCHER): LAUNCHER_DEST}
        scratch = None
        try:
            scratch = self._ws.new_scratch()
            job = self._start(["python", LAUNCHER_DEST], None, self.limits, mounts, None, scratch,
                              held=True)  # fmt: skip
        except (SandboxClosed, OSError):  # closed meanwhile, or out of resources: runs go cold
            self._ws.drop_scratch(scratch)
            return
        with self._lock:
            if self._spare is None and not self._closed:
                self._spare = Spare(job, scratch)
                return
        self._forget(job, scratch, kill=True)

    def _execute(
        self,
        argv: list[str],
        stdin: str | None,
        lim: Limits,
        ro_mounts: Mapping[Path, str],
        env: Mapping[str, str] | None,
    ) -> Outcome:
        self._check_open()
        with self._ws.scratch() as scratch:
            job = self._start(argv, stdin, lim, ro_mounts, env, scratch)
            try:
                return drive_sync(job)
            finally:
                self._forget(job, None)

    def _start(
        self,
        argv: list[str],
        stdin: str | None,
        lim: Limits,
        ro_mounts: Mapping[Path, str],
        env: Mapping[str, str] | None,
        scratch: Path | None,
        *,
        held: bool = False,
    ) -> Job:
        if (
            not isinstance(argv, list | tuple)
            or not argv
            or not all(isinstance(a, str) and "\0" not in a for a in argv)
        ):
            raise ValueError("argv must be a non-empty list of strings without NUL bytes")
        if stdin is not None and not isinstance(stdin, str):
            raise TypeError("stdin must be a str or None")
        if not isinstance(lim, Limits):
            raise TypeError("limits must be a Limits")
        cmd = bwrap.command(
            list(argv),
            workspace=self.workspace,
            limits=lim,
            interp=self._interp,
            userns_fd=self._userns.fd if self._userns else None,
            ro_mounts=bwrap.check_ro_mounts(ro_mounts),
            env=bwrap.sandbox_env(self._interp, env),
            scratch=scratch,
            weaken=self._weaken,
        )
        data = stdin.encode() if stdin is not None else None
        with self._lock:
            if self._closed:
                raise SandboxClosed("the sandbox is closed")
            fds = (self._userns.fd,) if self._userns else ()
            job = Job(
                cmd,
                stdin=data,
                wall_s=86_400.0 if "wall" in self._weaken else lim.wall_s,
                output_bytes=1 << 40 if "output" in self._weaken else lim.output_bytes,
                pass_fds=fds,
                env=dict(os.environ) if "env" in self._weaken else {},
                held=held,
            )
            self._jobs.add(job)
        return job

    def _forget(self, job: Job, scratch: Path | None, *, kill: bool = False) -> None:
        """A run is over (`kill`: a spare is dropped unused): unlist it, drop its scratch."""
        if kill:
            job.abandon()
        with self._lock:
            self._jobs.discard(job)
        self._ws.drop_scratch(scratch)
        self._refill()

    def _result(self, out: Outcome, lim: Limits) -> RunResult:
        stderr = out.stderr.decode(errors="replace")
        killed = out.killed or _limit_hit(out, stderr, lim)
        over = lim.workspace_mb * 1024 * 1024
        if not self._closed and not self._ws.quota and self._ws.usage_bytes() > over:
            self._ws.empty()  # the unprivileged quota: checked after the run (documented)
            stderr += "\n[sandbox] workspace over its quota: emptied\n"
        return RunResult(
            stdout=out.stdout.decode(errors="replace"),
            stderr=stderr,
            exit_code=out.status if out.status is None else os.waitstatus_to_exitcode(out.status),
            duration_s=out.duration_s,
            stdout_truncated=out.stdout_overflow,
            stderr_truncated=out.stderr_overflow,
            killed=killed,
        )

    # -- life cycle ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Kill every process of this sandbox and empty the workspace (a warm sandbox's spare,
        which has run nothing yet, is kept when the workspace stays on its tmpfs)."""
        with self._lock:
            if self._closed:
                raise SandboxClosed("the sandbox is closed")
            # An unused spare ran nothing: it stays, unless the workspace gets a fresh tmpfs
            spare = self._spare
            _kill_all({job for job in self._jobs if spare is None or job is not spare.job})
            if self._ws.empty(keep=spare.scratch if spare else None) and spare is not None:
                self._spare = None
                _kill_all({spare.job})
                self._jobs.discard(spare.job)
        self._refill()

    def close(self) -> None:
        """Kill every process, delete the workspace; idempotent."""
        with self._lock:
            self._closed = True
        self._finalizer()

    @property
    def closed(self) -> bool:
        """True after `close()`."""
        return self._closed

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- host-side file operations ------------------------------------------------------------

    def read_file(self, rel: str, *, max_bytes: int | None = None) -> str:
        """A workspace file's text (UTF-8, undecodable bytes replaced).

        Refuses (WorkspacePathError) absolute paths outside `/workspace`, `..`, symlinks
        anywhere on the path, non-regular files and files over `max_bytes` (default: the
        file-size limit).
        """
        return self.read_bytes(rel, max_bytes=max_bytes).decode(errors="replace")

    def read_bytes(self, rel: str, *, max_bytes: int | None = None) -> bytes:
        """A workspace file's bytes, with `read_file`'s refusals."""
        self._check_open()
        cap = max_bytes if max_bytes is not None else self.limits.file_size_mb * 1024 * 1024
        return self._ws.files.read_bytes(rel, max_bytes=cap)

    def write_file(self, rel: str, text: str | bytes) -> None:
        """Create or replace a workspace file (parents created), with `read_file`'s refusals."""
        self._check_open()
        data = text.encode() if isinstance(text, str) else bytes(text)
        self._ws.files.write_bytes(rel, data, max_bytes=self.limits.file_size_mb * 1024 * 1024)

    def list_files(self) -> list[str]:
        """Relative paths of the workspace's regular files, sorted (symlinks are not listed)."""
        self._check_open()
        return self._ws.files.list_files()

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxClosed("the sandbox is closed")


def _limit_hit(out: Outcome, stderr: str, lim: Limits) -> str | None:
    if out.status is None or not os.WIFEXITED(out.status):
        return None
    code = os.WEXITSTATUS(out.status)
    sig = code - _SIGNALLED
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and out.cpu_s >= int(lim.cpu_s)):
        return "cpu_time"
    if code == 0:
        return None
    tail = stderr[-2000:]
    if "MemoryError" in tail or "Cannot allocate memory" in tail:
        return "memory"
    if "Resource temporarily unavailable" in tail or "BlockingIOError" in tail:
        return "processes"
    return None


def _kill_all(jobs: set[Job]) -> None:
    """SIGKILL every run and wait until each pid namespace is gone; the drivers reap."""
    running = list(jobs)
    for job in running:
        job.kill("wall_time")
    for job in running:
        job.wait_gone(5.0)
        if job.idle:  # a spare has no driver to reap it
            job.abandon()


def _release(jobs: set[Job], ws: Workspace, userns: UserNamespace | None) -> None:
    _kill_all(jobs)
    ws.delete()
    if userns is not None:
        userns.close()
