"""A user namespace per sandbox, held open by a file descriptor (privileged hosts only).

When the server runs as root, bubblewrap would map the sandbox's user to host root, and the
kernel exempts host root from RLIMIT_NPROC — a fork bomb would not be stopped. So each
`Sandbox` gets a user namespace of its own in which the sandbox user (uid/gid 1000) is an
unprivileged host uid picked for this sandbox alone; uid 0 of the namespace stays host root so
that bubblewrap, which enters it with `--userns`, can still open the interpreter's files before
it drops to uid 1000. The namespace forbids nested user namespaces
(`user.max_user_namespaces = 0`). No process is kept: an open descriptor keeps it alive.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time

from .errors import SandboxUnavailable

#: The sandbox's uid and gid inside the namespace.
SANDBOX_ID = 1000
# Host uids handed to sandboxes: far above any distribution's allocations.
_HOST_ID_BASE = 1_500_000_000
_HOST_ID_SPAN = 1 << 24
# The first shell waits for the uid map; the second is exec'd after it, as a mapped uid 0, so it
# keeps the namespace's capabilities (an exec by an unmapped uid drops them all).
_SETUP = "read _ && exec /bin/sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && echo ready'"


def pick_host_id() -> int:
    """A host uid (and gid) for one sandbox, random so two sandboxes practically never share one."""
    return _HOST_ID_BASE + secrets.randbelow(_HOST_ID_SPAN)


class UserNamespace:
    """An open user namespace mapping uid/gid 0 → 0 and 1000 → `host_id`; `fd` is its handle.

    >>> ns = UserNamespace(pick_host_id())  # doctest: +SKIP
    >>> ns.close()  # doctest: +SKIP
    """

    def __init__(self, host_id: int, *, timeout_s: float = 5.0) -> None:
        self.host_id = host_id
        try:
            proc = subprocess.Popen(
                ["unshare", "--user", "/bin/sh", "-c", _SETUP],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={"PATH": "/usr/bin:/bin"},
            )
        except OSError as exc:
            raise SandboxUnavailable(f"{exc}; fix: apt-get install -y util-linux") from exc
        try:
            self.fd = self._adopt(proc, host_id, time.monotonic() + timeout_s)
            out, err = proc.communicate(b"\n", timeout=timeout_s)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        if out.strip() != b"ready":
            os.close(self.fd)
            raise SandboxUnavailable(f"could not seal the sandbox's user namespace: {err!r}")

    @staticmethod
    def _adopt(proc: subprocess.Popen[bytes], host_id: int, deadline: float) -> int:
        mine = os.readlink("/proc/self/ns/user")
        path = f"/proc/{proc.pid}"
        while os.readlink(f"{path}/ns/user") == mine:
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read() if proc.stderr else b""
                raise SandboxUnavailable(
                    f"cannot create a user namespace ({err.decode(errors='replace').strip()});"
                    " fix: sysctl -w user.max_user_namespaces=15000"
                )
            time.sleep(0.0002)
        mapping = f"0 0 1\n{SANDBOX_ID} {host_id} 1\n".encode()
        for name in ("uid_map", "gid_map"):
            fd = os.open(f"{path}/{name}", os.O_WRONLY)
            try:
                os.write(fd, mapping)  # one write: the kernel accepts a map once, whole
            finally:
                os.close(fd)
        return os.open(f"{path}/ns/user", os.O_RDONLY | os.O_CLOEXEC)

    def close(self) -> None:
        """Release the namespace (it dies with its last process and descriptor); idempotent."""
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)
