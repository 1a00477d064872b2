"""The sandbox's exceptions.

SandboxError                 base of everything this package raises
├── SandboxUnavailable       no usable isolation mechanism (the message is the one-line fix)
├── SandboxClosed            the sandbox was closed; it runs nothing any more
├── SandboxBusy              every run slot of the server stayed taken too long (retry later)
└── WorkspacePathError       a host-side file operation refused a path (also a ValueError)
    ├── ... reason "escape"      absolute, `..`, or through a symlink
    ├── ... reason "not_found"   no such file
    ├── ... reason "not_file"    a directory, FIFO, socket or device
    └── ... reason "too_large"   over the size limit, or the workspace is full
"""

from __future__ import annotations


class SandboxError(Exception):
    """Base class of the sandbox's errors."""


class SandboxUnavailable(SandboxError):
    """No isolation mechanism works on this host; the message says how to fix it.

    The sandbox never falls back to running a program unsandboxed.
    """


class SandboxClosed(SandboxError):
    """`run`, `reset` or a file operation was called after `close()`."""


class SandboxBusy(SandboxError):
    """Every run slot of this server (`code_gym.sandbox.gate.RUN_GATE`) stayed taken for the
    gate's longest wait; nothing ran. Retry later."""


class WorkspacePathError(SandboxError, ValueError):
    """A host-side file operation refused `path`; `reason` is a stable code.

    Codes: `escape` (absolute, `..`, a symlink on the way), `not_found`, `not_file` (a
    directory, FIFO, socket or device), `too_large` (over the size limit or the workspace is full).
    """

    def __init__(self, path: str, reason: str, message: str) -> None:
        super().__init__(f"{path!r}: {message}")
        self.path = path
        self.reason = reason
