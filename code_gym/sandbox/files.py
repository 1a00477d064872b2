"""Host-side file operations on a workspace that cannot be led outside it.

They walk a relative path one component at a time with `openat` and `O_NOFOLLOW`, so no
symlink is followed, not even one the sandbox swaps in while the walk runs (a check-then-open
on a path string would race); they refuse FIFOs, sockets and devices (opened with
`O_NONBLOCK`, then `fstat`), so a planted named pipe cannot hang the server, and they do not
write through a file with other hard links.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from .bwrap import WORKSPACE
from .errors import WorkspacePathError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: At most this many entries are listed.
MAX_LIST = 10_000
#: Listed paths are at most this deep and this long (a program may build deeper and longer
#: ones; they are not listed, so one listing stays small: at most MAX_LIST x MAX_PATH_CHARS).
MAX_DEPTH = 32
MAX_PATH_CHARS = 1024


def walk(root: Path, max_depth: int) -> Iterator[tuple[str, int, list[str]]]:
    """(relative folder, its fd, the names of its entries that are not folders), depth first,
    without recursion (a tree of any depth is no `RecursionError`) and without following a
    symlink; folders below `max_depth` are not entered. The fds open at once are the folders
    on the way down (at most `max_depth` + 1); each is closed when its subtree is done."""

    def scan(fd: int) -> tuple[list[str], list[str]]:
        files: list[str] = []
        folders: list[str] = []
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    (folders if entry.is_dir(follow_symlinks=False) else files).append(entry.name)
                except OSError:
                    continue
        return files, folders

    fd = os.open(root, _DIR_FLAGS)
    stack: list[tuple[str, int, Iterator[str]]] = [("", fd, iter(()))]
    try:
        files, folders = scan(fd)
        stack[0] = ("", fd, iter(folders))
        yield "", fd, files
        while stack:
            rel, fd, pending = stack[-1]
            name = next(pending, None)
            if name is None:
                os.close(stack.pop()[1])
                continue
            if len(stack) > max_depth:
                continue
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            try:
                files, folders = scan(sub)
            except OSError:
                os.close(sub)
                continue
            stack.append((f"{rel}{name}/", sub, iter(folders)))
            yield f"{rel}{name}/", sub, files
    finally:
        for _rel, fd, _pending in stack:
            os.close(fd)


def remove_tree(root: Path) -> None:
    """Delete the folder `root` and everything in it, depth first and without recursion (a
    tree of any depth), never through a symlink; folders the sandbox made unreadable or
    unwritable (chmod 000) are opened up first. Best effort: what cannot go stays."""
    with contextlib.suppress(OSError):
        os.chmod(root, 0o700)
    try:
        top = os.open(root, _DIR_FLAGS)
    except OSError:
        return
    # (folder fd, its name in the folder above, the names of its folders still to delete)
    stack: list[tuple[int, str, Iterator[str]]] = [(top, "", iter(_emptied(top)))]
    try:
        while stack:
            fd, _name, pending = stack[-1]
            name = next(pending, None)
            if name is None:
                os.close(fd)
                done = stack.pop()[1]
                if stack:
                    with contextlib.suppress(OSError):
                        os.rmdir(done, dir_fd=stack[-1][0])
                continue
            with contextlib.suppress(OSError):
                os.chmod(name, 0o700, dir_fd=fd)
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            stack.append((sub, name, iter(_emptied(sub))))
    finally:
        for fd, _name, _pending in stack:
            os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(root)


def _emptied(fd: int) -> list[str]:
    """Unlink every entry of the folder `fd` that is not a folder; the folders' names."""
    folders: list[str] = []
    with contextlib.suppress(OSError), os.scandir(fd) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except OSError:
                continue
    return folders


def _utf8(name: str) -> bool:
    """A name the tools can show and an agent can send back (no undecodable bytes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class WorkspaceFiles:
    """Reads, writes and lists regular files under `path`; files it creates belong to `owner`."""

    def __init__(self, path: Path, owner: int) -> None:
        self.path, self.owner = path, owner

    def read_bytes(self, rel: str, *, max_bytes: int) -> bytes:
        """The content of a regular file, refusing symlinks, escapes and more than `max_bytes`."""
        parts = split(rel)
        with self._parent(rel, parts, create=False) as dirfd:
            fd = self._open(rel, parts[-1], dirfd, os.O_RDONLY)
            try:
                size = os.fstat(fd).st_size
                if size > max_bytes:
                    raise WorkspacePathError(rel, "too_large", f"{size} bytes > {max_bytes}")
                data = os.read(fd, max_bytes + 1)
                if len(data) > max_bytes:
                    raise WorkspacePathError(rel, "too_large", f"more than {max_bytes} bytes")
                return data
            finally:
                os.close(fd)

    def write_bytes(self, rel: str, data: bytes, *, max_bytes: int) -> None:
        """Create or replace a regular file (and its parent directories) with `data`."""
        if len(data) > max_bytes:
            raise WorkspacePathError(rel, "too_large", f"{len(data)} bytes > {max_bytes}")
        parts = split(rel)
        with self._parent(rel, parts, create=True) as dirfd:
            flags = os.O_WRONLY | os.O_CREAT
            fd = self._open(rel, parts[-1], dirfd, flags)
            try:
                os.ftruncate(fd, 0)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                self._own(fd)
            except OSError as exc:
                raise WorkspacePathError(rel, "too_large", f"workspace full: {exc}") from exc
            finally:
                os.close(fd)

    def list_files(self) -> list[str]:
        """Relative paths of the regular files, sorted; symlinks and special files are skipped,
        and so are paths deeper than `MAX_DEPTH`, longer than `MAX_PATH_CHARS` or not UTF-8."""
        found: list[str] = []
        for rel_top, dirfd, files in walk(self.path, MAX_DEPTH):
            if not _utf8(rel_top):
                continue
            for name in files:
                path = rel_top + name
                if len(path) > MAX_PATH_CHARS or not _utf8(name):
                    continue
                try:
                    mode = os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode
                except OSError:
                    continue
                if stat.S_ISREG(mode):
                    found.append(path)
                if len(found) >= MAX_LIST:
                    return sorted(found)
        return sorted(found)

    @contextlib.contextmanager
    def _parent(self, rel: str, parts: list[str], *, create: bool) -> Iterator[int]:
        fd = os.open(self.path, _DIR_FLAGS)
        try:
            for name in parts[:-1]:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o755, dir_fd=fd)
                        self._own_at(fd, name)
                try:
                    nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError as exc:
                    raise WorkspacePathError(rel, "not_found", "no such directory") from exc
                except OSError as exc:  # ELOOP (a symlink) or ENOTDIR
                    raise WorkspacePathError(rel, "escape", f"{name!r} is not a directory") from exc
                os.close(fd)
                fd = nxt
            yield fd
        finally:
            os.close(fd)

    @staticmethod
    def _open(rel: str, name: str, dirfd: int, flags: int) -> int:
        flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, 0o644, dir_fd=dirfd)
        except FileNotFoundError as exc:
            raise WorkspacePathError(rel, "not_found", "no such file") from exc
        except IsADirectoryError as exc:
            raise WorkspacePathError(rel, "not_file", "is a directory") from exc
        except OSError as exc:
            if exc.errno == 40:  # ELOOP: the last component is a symlink
                raise WorkspacePathError(rel, "escape", "is a symlink") from exc
            raise WorkspacePathError(rel, "not_file", exc.strerror or "cannot open") from exc
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise WorkspacePathError(rel, "not_file", "not a regular file")
        if flags & os.O_WRONLY and st.st_nlink > 1:
            os.close(fd)  # a hard link: writing would change the other name's file too
            raise WorkspacePathError(rel, "escape", "has other hard links")
        os.set_blocking(fd, True)
        return fd

    def _own(self, fd: int) -> None:
        if os.geteuid() == 0:
            os.fchown(fd, self.owner, self.owner)

    def _own_at(self, dirfd: int, name: str) -> None:
        if os.geteuid() == 0:
            os.chown(name, self.owner, self.owner, dir_fd=dirfd, follow_symlinks=False)


def split(rel: str) -> list[str]:
    """The components of a workspace path; `/workspace/...` is accepted as relative.

    >>> split("/workspace/pkg/mod.py")
    ['pkg', 'mod.py']
    """
    if not isinstance(rel, str) or not rel or "\0" in rel:
        raise WorkspacePathError(str(rel), "escape", "empty or invalid path")
    path = rel
    if path == WORKSPACE or path.startswith(WORKSPACE + "/"):
        path = path[len(WORKSPACE) :].lstrip("/")
    if path.startswith("/"):
        raise WorkspacePathError(rel, "escape", "absolute paths outside /workspace are refused")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        raise WorkspacePathError(rel, "not_file", "is the workspace itself")
    if ".." in parts:
        raise WorkspacePathError(rel, "escape", "'..' is refused")
    return parts
