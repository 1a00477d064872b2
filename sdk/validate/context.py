"""What every check reads: the manifest, the environment class, live servers and shared episodes.

`Context` resolves the target (a folder or manifest file, `MODULE:ATTR`, a registered name, or a
`--url`), imports the entry point for the static checks, starts one real server per mode on
demand (`server(mode)`) and caches what several checks look at (the probe episodes, the rewards
seen), so each check stays a few lines.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, cast

from mcpgym.manifest import (
    Manifest,
    ManifestError,
    Panel,
    TaskSet,
    find_manifest,
    load_manifest,
)
from mcpgym.manifest.registry import environment_entry, import_target, manifest_path_for
from mcpgym.validate.base import Skip
from mcpgym.validate.policies import Spec
from mcpgym.validate.serve import LocalServer, ServerStartError
from mcpgym.validate.wire import Session

__all__ = ["Context", "import_target"]  # import_target: mcpgym.manifest.registry's, for the checks


def _distinct(specs: list[Spec], key: Callable[[Spec], Any]) -> list[Spec]:
    """`specs` without repeats of `key` (the first of each is kept)."""
    seen: set[str] = set()
    unique = []
    for s in specs:
        k = json.dumps(key(s), sort_keys=True, default=repr)
        if k not in seen:
            seen.add(k)
            unique.append(s)
    return unique


class Context:
    """Shared state of one validation run (see the module docstring)."""

    def __init__(
        self,
        target: str | None,
        *,
        url: str | None = None,
        seed: int = 0,
        manifest: Manifest | None = None,
        tasks: list[str] | None = None,
        gates: dict[str, float | None] | None = None,
    ) -> None:
        self.label = target or url or (manifest.name if manifest else "?")
        self.url = url
        self.seed = seed
        self.manifest = manifest
        self.tasks = tasks
        self.manifest_error: ManifestError | None = None
        self.manifest_path: Path | None = None
        self.entry_point: str | None = None
        self.root: str | None = None
        self._servers: dict[str, LocalServer] = {}
        self._server_errors: dict[str, str] = {}
        self.cache: dict[str, Any] = {}
        self.gates = dict(gates or {})
        """Threshold overrides for the gamer panel (`METRIC` or `GAMER.METRIC` -> value)."""
        Panel().with_overrides(self.gates)  # an unknown metric is a usage error (ValueError)
        self._closers: list[Callable[[], None]] = []
        self._resolve(target)
        known = sorted(self.manifest.tasks) if self.manifest else []
        unknown = [t for t in tasks or [] if self.manifest and t not in self.manifest.tasks]
        if unknown:
            raise ValueError(f"no task set {unknown[0]!r} in the manifest; known: {known}")

    # -- what is being validated -------------------------------------------------------------

    def _resolve(self, target: str | None) -> None:
        if self.manifest is not None:
            self.entry_point = self.manifest.entry_point
            self.root = self.manifest.root
            return
        path: Path | None = None
        if target and ":" not in target:
            p = Path(target)
            if p.exists():
                path = p
            else:
                found = environment_entry(target)
                if found is None:
                    raise ValueError(
                        f"{target!r} is not a folder, a manifest, MODULE:ATTR or an installed "
                        "environment (see `mcpgym list`)"
                    )
                target = found
        if path is None and target:
            self.entry_point = target
            path = manifest_path_for(target)
        if path is None:
            return
        self.manifest_path = find_manifest(path) if path.is_dir() else path
        self.root = str((path if path.is_dir() else path.parent).resolve())
        try:
            self.manifest = load_manifest(path)
        except ManifestError as exc:
            self.manifest_error = exc
            return
        self.entry_point = self.entry_point or self.manifest.entry_point
        self.root = self.manifest.root

    def require_manifest(self) -> Manifest:
        """The manifest, or `Skip` (its own check reports why there is none)."""
        if self.manifest is None:
            raise Skip("no valid manifest (see check_manifest)")
        return self.manifest

    def env_object(self) -> Any:
        """The imported entry point (class or factory); `Skip` if there is none."""
        if "env_object" not in self.cache:
            if not self.entry_point:
                raise Skip("no entry point")
            self.cache["env_object"] = import_target(self.entry_point, self.root)
        return self.cache["env_object"]

    # -- live servers --------------------------------------------------------------------------

    @property
    def startup_s(self) -> float:
        return self.manifest.timeouts.startup_s if self.manifest else 30.0

    @property
    def step_s(self) -> float:
        return self.manifest.timeouts.step_s if self.manifest else 10.0

    @property
    def reset_s(self) -> float:
        return self.manifest.timeouts.reset_s if self.manifest else 10.0

    def server_url(self, mode: str = "simulation") -> str:
        """The base URL serving `mode` (started on first use). `Skip` if it cannot start."""
        if self.url is not None:
            if mode != "simulation":
                raise Skip(f"--url serves one mode; {mode} is not checked")
            return self.url
        if mode in self._server_errors:
            raise Skip(f"the {mode} server did not start: {self._server_errors[mode]}")
        if not self.entry_point:
            raise Skip("no entry point to serve")
        if not self._servers:  # start every served mode at once: start-ups overlap
            modes = list(dict.fromkeys([mode, *(self.manifest.modes if self.manifest else [])]))
            threads = [threading.Thread(target=self._start, args=(m,)) for m in modes]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        srv = self._servers.get(mode)
        if srv is not None and not srv.alive:
            # a check crashed it (and failed for that); later checks get a fresh server
            self.cache["restarts"] = self.cache.get("restarts", 0) + 1
            srv.stop()  # reap it and close its pipe
            del self._servers[mode]
            srv = None
        if srv is None:
            self._start(mode)
        if mode in self._server_errors:
            raise ServerStartError(self._server_errors[mode], "")
        return self._servers[mode].url

    def _start(self, mode: str) -> None:
        assert self.entry_point is not None
        srv = LocalServer(self.entry_point, mode=mode, root=self.root, startup_s=self.startup_s)
        try:
            srv.start()
        except ServerStartError as exc:
            self._server_errors[mode] = f"{exc}; last output: {exc.logs[-800:]}"
            return
        self._servers[mode] = srv

    def server(self, mode: str = "simulation") -> LocalServer | None:
        """The child process serving `mode`, if the validator started one."""
        return self._servers.get(mode)

    def session(self, mode: str = "simulation", timeout: float | None = None) -> Session:
        """A new `/ws` session (a new environment instance) on the `mode` server."""
        wait = timeout if timeout is not None else max(self.step_s, self.reset_s) + 5.0
        return Session(self.server_url(mode), timeout=wait)

    def on_close(self, fn: Callable[[], None]) -> None:
        """Call `fn` when the run closes (before its servers stop)."""
        self._closers.append(fn)

    def close(self) -> None:
        """Stop every server this run started."""
        for fn in self._closers:
            fn()
        self._closers.clear()
        for srv in self._servers.values():
            srv.stop()
        self._servers.clear()

    # -- episodes ------------------------------------------------------------------------------

    def rng(self, purpose: str) -> random.Random:
        """A generator seeded by the run's seed and `purpose`: runs repeat exactly."""
        digest = hashlib.sha256(f"{self.seed}/{purpose}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def task_sets(self) -> dict[str, TaskSet]:
        """The task sets played: those named (`tasks=`), else every one not marked
        `validate: false` (a frozen set kept for reproducibility)."""
        found = self.manifest.tasks if self.manifest else {}
        if self.tasks is not None:
            return {n: found[n] for n in self.tasks if n in found}
        return {n: ts for n, ts in found.items() if ts.validate_}

    def tasks_note(self) -> str:
        """What was played, for the report: task sets, episodes, the sets left out."""
        played = self.task_sets()
        left = sorted(set(self.manifest.tasks if self.manifest else {}) - set(played))
        note = f"tasks: {', '.join(played) or 'seeds 0-2'} ({len(self.specs())} episodes)"
        return note + (f"; not played: {', '.join(left)} (--tasks NAME plays one)" if left else "")

    def sample(self, purpose: str, n: int, specs: list[Spec] | None = None) -> list[Spec]:
        """`n` of `specs` (default every episode) spread over the set, in order, chosen by the
        run's seed and `purpose`: the same run samples the same episodes."""
        pool = self.specs() if specs is None else specs
        if len(pool) <= n:
            return list(pool)
        chosen = sorted(self.rng(f"sample/{purpose}").sample(range(len(pool)), n))
        return [pool[i] for i in chosen]

    def sampled(self, got: int, of: int | None = None) -> str:
        """How a sampling check says what it covered: `5 of 51 episodes (sampled, seed 0)`."""
        total = len(self.specs()) if of is None else of
        if got >= total:
            return f"all {total} episodes"
        return f"{got} of {total} episodes (sampled, seed {self.seed})"

    def specs(self) -> list[Spec]:
        """The episodes of the played task sets (seeds 0..2 without any), distinct reset
        options."""
        if "specs" not in self.cache:
            self.cache["specs"] = _distinct(self._all_specs(), lambda s: s.reset)
        return self.cache["specs"]

    def panel_specs(self) -> list[Spec]:
        """The episodes the gamer panel plays: distinct reset options *and* prompts (phrasings
        of one task share their reset options; a gamer reading the prompt tells them apart)."""
        if "panel_specs" not in self.cache:
            self.cache["panel_specs"] = _distinct(self._all_specs(), lambda s: (s.reset, s.prompt))
        return self.cache["panel_specs"]

    def _all_specs(self) -> list[Spec]:
        m = self.manifest
        max_steps = m.episode.max_steps if m else 20
        out: list[Spec] = []
        for name, ts in self.task_sets().items():
            if ts.source == "seeds":
                out += [Spec(f"{name}/seed{s}", {"seed": s}, max_steps=max_steps) for s in ts.seeds]
            elif ts.source == "episodes":
                for i, e in enumerate(ts.episodes):
                    out.append(
                        Spec(e.id or f"{name}/{i}", e.reset, e.prompt, max_steps, data=e.data)
                    )
            else:
                assert ts.specs is not None
                made = import_target(ts.specs, self.root)
                found = made(**ts.args) if callable(made) else made
                got: list[Any] = list(cast(Iterable[Any], found))
                out += [
                    Spec(
                        str(s.id),
                        dict(s.reset),
                        str(getattr(s, "prompt", "")),
                        int(getattr(s, "max_steps", None) or max_steps),
                        dict(getattr(s, "tags", {}) or {}),
                        dict(getattr(s, "data", {}) or {}),
                    )
                    for s in got
                ][: ts.limit]
        if not out:
            out = [Spec(f"seed{s}", {"seed": s}, max_steps=max_steps) for s in (0, 1, 2)]
        return out

    def load_policy(self, which: str) -> Any:
        """The manifest's `oracle` or `null` policy as an agent; `Skip` when not declared."""
        m = self.require_manifest()
        ref = getattr(m.policies, which)
        if ref is None:
            raise Skip(f"no {which} policy declared (policies.{which})")
        if ref.startswith("builtin:"):
            from mcpgym.validate.policies import scripted

            return scripted([])
        found = import_target(ref, self.root)
        if hasattr(found, "start") and not isinstance(found, type):
            return found
        return found()
