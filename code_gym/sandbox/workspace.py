"""A sandbox's directory on the host: the workspace, each run's scratch space, the quota.

A privileged server mounts one tmpfs of `Limits.workspace_mb` (and 256 inodes per MB) on the
sandbox's directory, which holds `workspace/` (the sandbox's `/workspace`) and `scratch/`, where
each run gets a fresh `/tmp` and `/dev/shm` that are deleted when it ends. Filling any of them —
with bytes or with empty files — stops at the quota with ENOSPC, and emptying the workspace is
one remount. Without privileges the directory is plain, each run's `/tmp` is a size-limited
tmpfs of bubblewrap's, and the workspace quota is only checked after each run
(docs/code_gym_sandbox.md).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .files import WorkspaceFiles, remove_tree, walk

_MNT_DETACH = 2
_REMOUNT_ABOVE = 2_000
#: How deep `usage_bytes` counts without a tmpfs (the fds it holds open at once).
USAGE_DEPTH = 512


def _remove(path: Path) -> None:
    """Delete a file or a tree the sandbox made, even one it made unwritable (chmod 000)."""

    if path.is_dir() and not path.is_symlink():
        remove_tree(path)  # any depth (shutil.rmtree recurses: a deep tree is a RecursionError)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class Workspace:
    """A sandbox's host directory; `path` is the workspace in it, owned by the sandbox user."""

    def __init__(self, *, root: Path | None, owner: int, quota_mb: int, privileged: bool) -> None:
        base = Path(root) if root is not None else Path(tempfile.gettempdir())
        self.home = Path(tempfile.mkdtemp(prefix="mcpgym-sandbox-", dir=base))
        self.path = self.home / "workspace"
        self.owner, self.quota_mb = owner, quota_mb
        self.mounted = False
        if privileged:  # root without CAP_SYS_ADMIN (a container) cannot mount: no tmpfs then
            with contextlib.suppress(PermissionError):
                self._mount()
        #: True when the tmpfs enforces the quota (False: checked after each run only).
        self.quota = self.mounted
        self._layout()
        self.files = WorkspaceFiles(self.path, owner)

    def _layout(self) -> None:
        for d in (self.path, self.home / "scratch"):
            d.mkdir(mode=0o700, exist_ok=True)
            os.chmod(d, 0o700)
            if os.geteuid() == 0:
                os.chown(d, self.owner, self.owner)

    def _mount(self) -> None:
        opts = f"size={self.quota_mb}m,nr_inodes={self.quota_mb * 256},mode=0700"
        opts += f",uid={self.owner},gid={self.owner}"
        flags = 0x2 | 0x4  # MS_NOSUID | MS_NODEV; not MS_NOEXEC: the agent's programs run
        lib = _libc()
        if lib.mount(b"tmpfs", os.fsencode(self.home), b"tmpfs", flags, opts.encode()) != 0:
            err = ctypes.get_errno()
            msg = f"mount tmpfs on {self.home}: {os.strerror(err)}"
            raise (PermissionError if err == errno.EPERM else OSError)(err, msg)
        self.mounted = True

    def _unmount(self) -> None:
        if self.mounted and _libc().umount2(os.fsencode(self.home), _MNT_DETACH) == 0:
            self.mounted = False

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path | None]:
        """A fresh directory for one run, with `tmp/` and `shm/` (its `/tmp` and `/dev/shm`),
        deleted after it; None without the quota tmpfs (bubblewrap's size-limited tmpfs then)."""
        run = self.new_scratch()
        try:
            yield run
        finally:
            self.drop_scratch(run)

    def new_scratch(self) -> Path | None:
        """`scratch()` without the `with`: the caller passes the directory to `drop_scratch`."""
        if not self.mounted:
            return None
        run = Path(tempfile.mkdtemp(dir=self.home / "scratch"))
        for d in (run / "tmp", run / "shm"):
            d.mkdir(mode=0o700)
            os.chown(d, self.owner, self.owner)
        return run

    @staticmethod
    def drop_scratch(run: Path | None) -> None:
        """Delete a run's scratch directory (None: nothing to do)."""
        if run is not None:
            remove_tree(run)

    def empty(self, keep: Path | None = None) -> bool:
        """Remove everything in the workspace and the runs' scratch space but `keep` (a
        scratch directory still in use); True when that took a fresh tmpfs (then `keep` is
        gone too: what uses it must stop).

        A few entries are deleted one by one; many (more than `_REMOUNT_ABOVE` inodes in use)
        are dropped at once with a fresh tmpfs, whose unmount waits for an RCU grace period
        (milliseconds) whatever the tmpfs holds.
        """
        if self.mounted and self.usage_inodes() > _REMOUNT_ABOVE:
            self._remount()
            return True
        kept = 0
        for top in (self.path, self.home / "scratch"):
            for entry in os.scandir(top):
                if keep is not None and Path(entry.path) == keep:
                    kept = 1 + sum(len(d) + len(f) for _, d, f in os.walk(keep))
                    continue
                _remove(Path(entry.path))
        if self.usage_inodes() > 3 + kept:  # something could not be removed: a clean tmpfs
            self._remount()
            return True
        return False

    def _remount(self) -> None:
        self._unmount()
        self._mount()
        self._layout()

    def delete(self) -> None:
        """Unmount and remove the directory (idempotent)."""
        self._unmount()
        remove_tree(self.home)

    def usage_inodes(self) -> int:
        """Inodes in use on the quota tmpfs (0 when there is none)."""
        if not self.mounted:
            return 0
        st = os.statvfs(self.home)
        return st.f_files - st.f_ffree

    def usage_bytes(self) -> int:
        """Bytes in use (the tmpfs's own count when mounted)."""
        if self.mounted:
            st = os.statvfs(self.home)
            return (st.f_blocks - st.f_bfree) * st.f_frsize
        total = 0
        for _rel, dirfd, files in walk(self.path, USAGE_DEPTH):  # no recursion, fds <= depth
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_blocks * 512
        return total
