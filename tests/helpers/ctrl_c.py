"""Start a child that a test can Ctrl-C, wherever the suite itself was started.

A shell without job control starts a background command (`just test &`, a CI runner's job) with
SIGINT ignored, and every child inherits that: Python then installs no `KeyboardInterrupt`
handler, so a test's SIGINT would be ignored and the test would hang until its timeout. A test
that sends Ctrl-C starts its child with `preexec_fn=ctrl_c_able`, as a terminal would.
"""

from __future__ import annotations

import signal


def ctrl_c_able() -> None:
    """`preexec_fn` for `subprocess.Popen`: the child gets SIGINT's default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
