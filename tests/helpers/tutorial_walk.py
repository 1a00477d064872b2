"""docs/tutorial.md played as a reader plays it: its marked blocks, in page order, in a temporary
folder, with a fresh virtual environment the page's own setup block makes.

A block is a step when the line before its fence is `<!-- tutorial: NAME [OPTION ...] -->`:

- `write=FILE`: the block is the content of FILE (the reader saves it);
- `edit=FILE`: a ```diff block, its `-` lines replaced by its `+` lines in FILE, exactly once;
- otherwise a shell block, run by bash in the folder; from the setup step on the shell has the
  venv activated (the page says every later shell needs `source .venv/bin/activate`);
- `exit=N`: the exit code the page promises (default 0);
- `background`: a server the reader leaves running; it must print its start-up line and answer
  `/health`, and it is stopped (the reader's Ctrl-C: SIGINT) when the next one starts or the walk
  ends;
- `needs=docker` / `needs=claude`: run only where the suite provides a Docker engine / Claude Code.

`<!-- tutorial-output: NAME -->` before a ```text block: every line of it (up to a trailing
`...`) is in what step NAME printed. Two substitutions, both named on the page or here:
`path/to/mcpgym` is this checkout, and port 8000 becomes a free port (`--port P` appended to a
background `mcpgym serve`, `127.0.0.1:8000` replaced in files and commands), since other tests
share the machine.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from helpers.ctrl_c import ctrl_c_able

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tutorial.md"
PLACEHOLDER = "path/to/mcpgym"
_MARK = re.compile(r"<!-- tutorial: (\S+)((?: [^>]*?)?) -->\n```(\w+)\n(.*?)```", re.S)
_OUTPUT = re.compile(r"<!-- tutorial-output: (\S+) -->\n```text\n(.*?)```", re.S)


@dataclass
class Step:
    name: str
    lang: str
    body: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def needs(self) -> str | None:
        return self.options.get("needs")


def steps(text: str | None = None) -> list[Step]:
    """The page's steps in order."""
    text = PAGE.read_text() if text is None else text
    out = []
    for m in _MARK.finditer(text):
        # `write=drawers.py` → {"write": "drawers.py"}, `background` → {"background": ""}
        opts = {key: value for key, _, value in (o.partition("=") for o in m.group(2).split())}
        out.append(Step(m.group(1), m.group(3), m.group(4), opts))
    return out


def outputs(text: str | None = None) -> dict[str, list[str]]:
    """Step name → the output lines the page shows for it."""
    text = PAGE.read_text() if text is None else text
    return {m.group(1): m.group(2).splitlines() for m in _OUTPUT.finditer(text)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _norm(line: str) -> str:
    return " ".join(line.split())


def _uv_dir(scratch: Path) -> Path:
    """A folder holding `uv`: the one on PATH, else `pip install uv` into scratch (this suite
    needs no more than Python and pip)."""
    found = shutil.which("uv")
    if found:  # alone in a folder: never other programs of the folder it is in (a venv's)
        alone = scratch / "uv-bin"
        alone.mkdir(exist_ok=True)
        (alone / "uv").symlink_to(found)
        return alone
    target = scratch / "uv-tool"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "--target", str(target), "uv"], check=True, timeout=600)
    return target / "bin"


@dataclass
class Walk:
    """The reader's folder and shell, one step at a time."""

    folder: Path
    scratch: Path
    report: Callable[[str], None]
    extra_path: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=_free_port)
    activated: bool = False
    server: subprocess.Popen[str] | None = None
    printed: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    _uv: str = ""

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        ours = str(Path(sys.executable).parent)  # never the test's own venv: the reader's
        path = [p for p in env["PATH"].split(os.pathsep) if p != ours]
        self._uv = self._uv or str(_uv_dir(self.scratch))
        env["PATH"] = os.pathsep.join([*self.extra_path, self._uv, *path])
        env.update(self.extra_env)
        env["NO_COLOR"] = "1"
        env["COLUMNS"] = "200"
        return env

    def _text(self, body: str) -> str:
        return body.replace(PLACEHOLDER, str(ROOT)).replace(
            "127.0.0.1:8000", f"127.0.0.1:{self.port}"
        )

    def _script(self, body: str) -> str:
        prefix = "source .venv/bin/activate\n" if self.activated else ""
        return "set -eo pipefail\n" + prefix + self._text(body)

    def run(self, step: Step) -> None:
        t0 = time.perf_counter()
        if "write" in step.options:
            (self.folder / step.options["write"]).write_text(self._text(step.body))
        elif "edit" in step.options:
            self._edit(step)
        elif "background" in step.options:
            self._background(step)
        else:
            self._shell(step)
        if step.name == "setup":
            self.activated = True
        self.timings[step.name] = time.perf_counter() - t0
        self.report(f"tutorial step {step.name}: {self.timings[step.name]:.1f} s")

    def _edit(self, step: Step) -> None:
        assert step.lang == "diff", f"step {step.name}: an edit is a diff block"
        lines = step.body.splitlines()
        old = "\n".join(line[1:] for line in lines if line.startswith("-"))
        new = "\n".join(line[1:] for line in lines if line.startswith("+"))
        path = self.folder / step.options["edit"]
        text = path.read_text()
        assert text.count(old) == 1, f"step {step.name}: the lines to change are not in {path}"
        path.write_text(text.replace(old, new))

    def _shell(self, step: Step) -> None:
        proc = subprocess.run(
            ["bash", "-c", self._script(step.body)],
            cwd=self.folder,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        self.printed[step.name] = proc.stdout + proc.stderr
        want = int(step.options.get("exit", "0"))
        assert proc.returncode == want, (
            f"step {step.name} exited {proc.returncode}, the page says {want}:\n"
            f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )

    def _background(self, step: Step) -> None:
        self.stop()
        body = self._text(step.body).strip()
        assert body.startswith("mcpgym serve ") and "\n" not in body, step.body
        log = self.scratch / f"{step.name}.log"
        with log.open("w") as out:
            self.server = subprocess.Popen(
                ["bash", "-c", f"{self._script(body)} --port {self.port}"],
                cwd=self.folder,
                env=self.env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
                preexec_fn=ctrl_c_able,  # `stop` is the reader's Ctrl-C
            )
        url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:
            assert self.server.poll() is None, f"step {step.name} exited:\n{log.read_text()}"
            try:
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"step {step.name}: no /health in 60 s"
            time.sleep(0.2)
        self.printed[step.name] = log.read_text()

    def stop(self) -> None:
        """The reader's Ctrl-C in the server's shell."""
        if self.server is None:
            return
        os.killpg(self.server.pid, signal.SIGINT)
        try:
            self.server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.server.pid, signal.SIGKILL)
            self.server.wait(timeout=10)
        self.server = None

    def check_output(self, name: str, expected: list[str]) -> None:
        got = [_norm(line) for line in self.printed[name].splitlines()]
        for line in expected:
            want = _norm(line.removesuffix("..."))
            assert any(want in g for g in got), (
                f"step {name}: the page shows {line!r}; it printed:\n{self.printed[name][-4000:]}"
            )
