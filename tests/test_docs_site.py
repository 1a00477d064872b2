"""The documentation site: API reference pages current with every package's `__all__`, every
picture present, the quickstart played as a reader plays it (fresh interpreters, a temp folder,
a real `mcpgym serve`). The strict site build itself is `just docs` (CI runs it)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml

from helpers.wait import wait_until

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.S)


def test_reference_pages_cover_every_public_name() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "docs_reference.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_page_and_picture_is_in_the_site() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, list):
            return [p for item in node for p in pages(item)]
        if isinstance(node, dict):
            return [p for value in node.values() for p in pages(value)]
        return []

    in_nav = set(pages(config["nav"]))
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert on_disk - in_nav == set(), "pages missing from mkdocs.yml's nav"
    assert in_nav - on_disk == set(), "nav entries without a page"
    for source in (DOCS / "diagrams").glob("*.dot"):
        assert source.with_suffix(".svg").is_file(), f"{source.name}: run `just docs-diagrams`"
    for page in DOCS.rglob("*.md"):
        for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text()):
            assert (page.parent / image).is_file(), f"{page.name}: missing picture {image}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.server
def test_quickstart_runs_as_a_reader_runs_it(tmp_path: Path) -> None:
    env_block, client_block = _blocks("quickstart.md")
    (tmp_path / "notes_env.py").write_text(env_block)
    run = subprocess.run(
        [sys.executable, "notes_env.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
    port = _free_port()
    serve = [sys.executable, "-m", "mcpgym.servers", "serve", "notes_env:Notes"]
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen([*serve, "--port", str(port)], cwd=tmp_path, stderr=log)
    try:

        def healthy() -> bool:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(healthy, timeout=30, what="mcpgym serve")
        code = client_block.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        client = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert client.returncode == 0, client.stderr
        assert client.stdout.split() == ["1"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()
