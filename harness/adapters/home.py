"""`EpisodeHome`: a private HOME, config, cache and work folder for one harness episode.

Every CLI reads and writes under `$HOME` (credentials, settings, session logs, caches), so each
episode gets its own temporary folder and an environment that points every XDG variable and
`TMPDIR` into it; `remove()` deletes it. The harness's environment is built from an allowlist of
the caller's variables (locale, certificates, proxies, `PATH`) — never the caller's API keys.

Example:
    >>> home = EpisodeHome("doc")
    >>> env = home.environ({"EXTRA": "1"})
    >>> env["HOME"] == str(home.home), env["EXTRA"], "ANTHROPIC_API_KEY" in env
    (True, '1', False)
    >>> home.remove(); home.root.exists()
    False
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["INHERITED_ENV", "EpisodeHome"]

INHERITED_ENV = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
"""Variables a harness inherits from the caller (plus every `LC_*`)."""


class EpisodeHome:
    """A temporary folder tree: `home/` (HOME and XDG dirs), `work/` (the harness's working
    directory) and `tmp/` (TMPDIR)."""

    def __init__(self, label: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=f"mcpgym-{label}-"))
        self.home = self.root / "home"
        self.work = self.root / "work"
        self.tmp = self.root / "tmp"
        for folder in (self.home, self.work, self.tmp, self.config, self.data, self.cache):
            folder.mkdir(parents=True, exist_ok=True)

    @property
    def config(self) -> Path:
        return self.home / ".config"

    @property
    def data(self) -> Path:
        return self.home / ".local" / "share"

    @property
    def cache(self) -> Path:
        return self.home / ".cache"

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The harness's environment: the inherited allowlist, the private folders, `extra`."""
        env = {k: v for k, v in os.environ.items() if k in INHERITED_ENV or k.startswith("LC_")}
        env.setdefault("PATH", os.defpath)
        env.update(
            HOME=str(self.home),
            USERPROFILE=str(self.home),
            XDG_CONFIG_HOME=str(self.config),
            XDG_DATA_HOME=str(self.data),
            XDG_CACHE_HOME=str(self.cache),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            TMPDIR=str(self.tmp),
        )
        env.update(extra or {})
        return env

    def remove(self) -> None:
        """Delete the whole tree (idempotent)."""
        shutil.rmtree(self.root, ignore_errors=True)
