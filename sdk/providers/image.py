"""Build a container image for an environment (`mcpgym build`) and push it to an OCI registry.

The image is two stages over one base: a build stage makes `/opt/venv` (dependencies first, so
their layer is cached while the environment's code changes), and the final stage copies that
virtualenv in **one** layer, adds a non-root user, a `/health` HEALTHCHECK and an exec-form CMD
(`mcpgym serve` is PID 1's only child, so SIGTERM reaches it). Mode, target and serve options are
image labels, which providers read.

Example:
    >>> spec = BuildSpec(target="mcpgym.examples.guess:GuessEnv")
    >>> "USER 10001:10001" in render_dockerfile(spec, wheels=["mcpgym-0.1.0-py3-none-any.whl"])
    True
"""

from __future__ import annotations

import dataclasses
import email.parser
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcpgym.providers._engine import connect
from mcpgym.providers.base import ProviderError
from mcpgym.providers.build_log import Stage, quiet, read_stream
from mcpgym.targets import on_import_path

__all__ = [
    "DEFAULT_BASE",
    "LABEL_MODE",
    "LABEL_OPTIONS",
    "LABEL_PORT",
    "LABEL_TARGET",
    "BuildSpec",
    "build_image",
    "make_context",
    "push_image",
    "render_dockerfile",
]

#: The default base: an official Python image (any image with python3 and its venv module works).
DEFAULT_BASE = "python:3.11-slim"
LABEL_TARGET = "io.mcpgym.target"
LABEL_MODE = "io.mcpgym.mode"
LABEL_OPTIONS = "io.mcpgym.options"
LABEL_PORT = "io.mcpgym.port"
PORT = 8000
UID = 10001
_SKIP_DIRS = {"build", "dist", "__pycache__", "node_modules", "reports", "tests", "docs"}
_NAME_END = re.compile(r"[\s\[<>=!~;(@]")


@dataclass
class BuildSpec:
    """What to build: an environment `target` (MODULE:ATTR) or a project `path`, and how.

    `options` become `mcpgym serve --KEY VALUE` flags of the image's CMD (and a label).
    """

    target: str | None = None
    path: Path | None = None
    tag: str | None = None
    base: str = DEFAULT_BASE
    mode: str = "simulation"
    extras: Sequence[str] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    pip_args: Sequence[str] = ()


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(line: str) -> str:
    return _norm(_NAME_END.split(line.strip(), maxsplit=1)[0])


def requirements_of(metadata_text: str, extras: Sequence[str]) -> list[str]:
    """The `Requires-Dist` lines of a wheel's METADATA that apply with `extras` requested."""
    msg = email.parser.Parser().parsestr(metadata_text)
    out: list[str] = []
    wanted = {_norm(e) for e in extras}
    for line in msg.get_all("Requires-Dist") or []:
        req, _, marker = line.partition(";")
        marker = marker.strip()
        found = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", marker)
        if found:
            if _norm(found.group(1)) not in wanted:
                continue
            # Drop the satisfied `extra == "x"` clause; keep any platform condition.
            marker = re.sub(r"""\s*(and\s+)?extra\s*==\s*['"][^'"]+['"]""", "", marker).strip()
            marker = re.sub(r"\s+and\s*$", "", marker).strip()
        out.append(f"{req.strip()}; {marker}" if marker else req.strip())
    return out


def _wheel_metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return zf.read(name).decode("utf-8")


def _wheel_name(wheel: Path) -> str:
    return _norm(wheel.name.split("-", 1)[0])


def mcpgym_source() -> Path | None:
    """The source tree of the running mcpgym (an editable or source checkout), if there is one."""
    for dist in importlib.metadata.distributions():
        if _norm(dist.metadata["Name"] or "") != "mcpgym":
            continue
        raw = dist.read_text("direct_url.json")
        if raw:
            url = json.loads(raw).get("url", "")
            if url.startswith("file://") and (Path(url[7:]) / "pyproject.toml").is_file():
                return Path(url[7:])
    spec = importlib.util.find_spec("mcpgym")  # where it is, without importing the package
    origin = spec.origin if spec is not None and spec.origin else __file__
    for parent in Path(origin).resolve().parents:
        pyproject = parent / "pyproject.toml"
        if pyproject.is_file():
            data = tomllib.loads(pyproject.read_text("utf-8"))
            if data.get("project", {}).get("name") == "mcpgym":
                return parent
    return None


def _build_wheel(project: Path, out: Path) -> Path:
    """A wheel of a project directory into `out`: `pip wheel --no-deps` (the environment's own
    build tools first, then an isolated build), or `uv build --wheel` in an environment made by
    `uv venv`, which has no pip."""
    before = set(out.glob("*.whl"))
    uv = shutil.which("uv")
    if importlib.util.find_spec("pip") is not None:
        base = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out)]
        cmds = [[*base[:4], "--no-build-isolation", *base[4:], str(project)], [*base, str(project)]]
    elif uv is not None:
        cmds = [[uv, "build", "--wheel", "-q", "--out-dir", str(out), str(project)]]
    else:
        raise ProviderError(
            f"could not build a wheel of {project}: this environment ({sys.prefix}) has neither "
            "pip nor uv; fix: python -m ensurepip (or uv pip install pip)"
        )
    stderr = ""
    for cmd in cmds:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        stderr = proc.stderr
        if proc.returncode == 0:
            new = set(out.glob("*.whl")) - before
            if new:
                return new.pop()
    raise ProviderError(f"could not build a wheel of {project}: {stderr.strip()[-2000:]}")


def _tree_key(project: Path) -> str:
    """A key that changes when any source file of `project` changes (path, size, mtime)."""
    digest = hashlib.sha256()
    for path in sorted(project.rglob("*")):
        rel = path.relative_to(project).parts
        if any(p.startswith(".") or p in _SKIP_DIRS or p.endswith(".egg-info") for p in rel):
            continue
        if path.is_file() and path.suffix in (".py", ".toml", ".json", ".typed", ".cfg", ".md"):
            st = path.stat()
            digest.update(f"{'/'.join(rel)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _cached_wheel(project: Path, out: Path, progress: Stage = quiet) -> Path:
    """`_build_wheel`, reusing a wheel of the same source tree (building one takes ~20 s)."""
    cache = Path(tempfile.gettempdir()) / "mcpgym-wheels" / _tree_key(project)
    found = sorted(cache.glob("*.whl"))
    outcome = "cached"
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        found = [_build_wheel(project, cache)]
        outcome = "built"
    progress("mcpgym's wheel", outcome)
    return Path(shutil.copy2(found[0], out / found[0].name))


def _project_target(path: Path, target: str | None) -> str:
    if target:
        return target
    pyproject = path / "pyproject.toml"
    data = tomllib.loads(pyproject.read_text("utf-8"))
    found = data.get("tool", {}).get("mcpgym", {}).get("env")
    if not isinstance(found, str):
        raise ProviderError(
            f"{pyproject}: name the environment with [tool.mcpgym] env = 'module:Attr' "
            "or pass a MODULE:ATTR target"
        )
    return found


def render_dockerfile(spec: BuildSpec, *, wheels: Sequence[str], app: bool = False) -> str:
    """The Dockerfile for `spec`, given the wheel files in the context's `wheels/` folder."""
    assert spec.target, "render_dockerfile needs a resolved target"
    cmd = ["/opt/venv/bin/mcpgym", "serve", spec.target, "--host", "0.0.0.0"]
    cmd += ["--port", str(PORT), "--mode", spec.mode]
    for key, value in spec.options.items():
        cmd += [f"--{key}", value]
    labels = {
        LABEL_TARGET: spec.target,
        LABEL_MODE: spec.mode,
        LABEL_OPTIONS: json.dumps(dict(spec.options), sort_keys=True),
        LABEL_PORT: str(PORT),
    }
    pip = " ".join(["/opt/venv/bin/pip", "install", "--no-cache-dir", *spec.pip_args])
    local = " ".join(f"/build/wheels/{w}" for w in wheels)
    health = (
        "import sys, urllib.request; "
        f"url = 'http://127.0.0.1:{PORT}/health'; "
        "sys.exit(urllib.request.urlopen(url, timeout=2).status != 200)"
    )
    lines = [
        f"FROM {spec.base} AS build",
        "ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore",
        "RUN python3 -m venv /opt/venv",
        "COPY requirements.txt /build/requirements.txt",
        # Dependencies in their own (cached) build-stage layer, the environment's wheels after.
        f"RUN {pip} -r /build/requirements.txt",
        "COPY wheels /build/wheels",
        f"RUN {pip} --no-deps {local}" if wheels else "RUN true",
        f"FROM {spec.base}",
        f"RUN useradd --uid {UID} --user-group --no-create-home --home-dir /tmp "
        "--shell /usr/sbin/nologin mcpgym",
        "COPY --from=build /opt/venv /opt/venv",
    ]
    if app:
        lines.append("COPY app /opt/app")
    lines += [
        "WORKDIR /opt/app" if app else "WORKDIR /tmp",
        "ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/tmp",
        f"USER {UID}:{UID}",
        f"EXPOSE {PORT}",
        "LABEL " + " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()),
        "HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 "
        f"CMD {json.dumps(['/opt/venv/bin/python', '-c', health])}",
        f"CMD {json.dumps(cmd)}",
    ]
    return "\n".join(lines) + "\n"


def _module_files(module: str) -> tuple[str | None, Path | None]:
    """The distribution that provides top-level `module`, or the local file/folder holding it."""
    top = module.split(".", 1)[0]
    on_import_path()  # the rule `serve` and `validate` follow: the current folder first
    dists = importlib.metadata.packages_distributions().get(top)
    if dists:
        return dists[0], None
    found = importlib.util.find_spec(top)
    if found is None or found.origin is None:
        raise ProviderError(f"cannot find module {top!r} (run from the folder that holds it)")
    origin = Path(found.origin)
    return None, origin.parent if origin.name == "__init__.py" else origin


def make_context(spec: BuildSpec, folder: Path, progress: Stage = quiet) -> BuildSpec:
    """Write the build context for `spec` into `folder`; returns `spec` with its target resolved
    (`progress` hears of the wheels it builds, the slow part)."""
    wheels_dir = folder / "wheels"
    wheels_dir.mkdir(parents=True, exist_ok=True)
    wheels: list[Path] = []
    pins: list[str] = []
    app = False
    target = spec.target
    if spec.path is not None:
        target = _project_target(spec.path, spec.target)
        stage = f"the wheel of {spec.path}"
        progress(stage, None)
        wheels.append(_build_wheel(spec.path, wheels_dir))
        progress(stage, "built")
    elif target:
        dist, local = _module_files(target.partition(":")[0])
        if local is not None:
            dest = folder / "app" / local.name
            if local.is_dir():
                shutil.copytree(local, dest, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(local, dest)
            app = True
        elif dist and _norm(dist) != "mcpgym":
            pins.append(f"{dist}=={importlib.metadata.version(dist)}")
    else:
        raise ProviderError("nothing to build: give a MODULE:ATTR target or a project PATH")
    source = mcpgym_source()
    if source is not None:
        progress("mcpgym's wheel", None)
        wheels.append(_cached_wheel(source, wheels_dir, progress))
    else:
        pins.append(f"mcpgym=={importlib.metadata.version('mcpgym')}")
    local_names = {_wheel_name(w) for w in wheels}
    reqs: list[str] = []
    for wheel in wheels:
        extras = spec.extras if _wheel_name(wheel) == "mcpgym" else ()
        for line in requirements_of(_wheel_metadata(wheel), extras):
            if _req_name(line) not in local_names and line not in reqs:
                reqs.append(line)
    (folder / "requirements.txt").write_text("\n".join(sorted(reqs) + pins) + "\n", "utf-8")
    resolved = dataclasses.replace(spec, target=target)
    dockerfile = render_dockerfile(resolved, wheels=[w.name for w in wheels], app=app)
    (folder / "Dockerfile").write_text(dockerfile, "utf-8")
    return resolved


def default_tag(target: str) -> str:
    """`mcpgym-<module>:latest` for a target such as `pkg.env:MyEnv`."""
    module = target.partition(":")[0].replace("_", "-").replace(".", "-").lower()
    return f"mcpgym-{module}:latest"


def build_image(
    spec: BuildSpec,
    *,
    engine: str | None = None,
    network: str = "host",
    progress: Stage = quiet,
) -> str:
    """Build `spec` on the engine at `engine` (default `$DOCKER_HOST`); returns the image tag.

    `network` is the build containers' network (`host` lets pip reach the package index);
    `progress(stage, outcome)` hears of each wheel and each step of the image build.
    """
    with tempfile.TemporaryDirectory(prefix="mcpgym-build-") as tmp:
        resolved = make_context(spec, Path(tmp), progress)  # bad input fails before any engine
        assert resolved.target is not None
        tag = spec.tag or default_tag(resolved.target)
        client = connect(engine)
        try:
            lines = client.api.build(
                path=tmp, tag=tag, rm=True, forcerm=True, network_mode=network, decode=True
            )
            read_stream(lines, f"building {tag}", progress)
        finally:
            client.close()
    return tag


def push_image(image: str, registry: str, *, engine: str | None = None) -> str:
    """Tag `image` as `registry/<name>:<tag>` and push it; returns the registry reference."""
    client = connect(engine)
    try:
        return _push(client, image, registry)
    finally:
        client.close()


def _push(client: Any, image: str, registry: str) -> str:
    name, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
    tag = tag or "latest"
    repo = f"{registry.rstrip('/')}/{name.rsplit('/', 1)[-1]}"
    try:
        client.images.get(image).tag(repo, tag)
    except Exception as exc:
        raise ProviderError(f"cannot tag {image} for {registry}: {exc}") from exc
    read_stream(client.api.push(repo, tag=tag, stream=True, decode=True), f"pushing {repo}")
    client.close()
    return f"{repo}:{tag}"
