"""The operator token need not travel on the command line: `--token-file` and
`$MCPGYM_OPERATOR_TOKEN` give it to `mcpgym serve` (the process list then shows no token, and
no child inherits the variable); ambiguous or empty tokens are usage errors."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from helpers.mcp import MCPGYM
from helpers.npm import free_port
from helpers.wait import wait_until
from mcpgym.providers.k8s_manifests import TOKEN_ENV as POD_TOKEN_ENV
from mcpgym.servers.cli.serve import TOKEN_ENV, _operator_token  # pyright: ignore[reportPrivateUsage]

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def _ns(token: str | None = None, token_file: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(token=token, token_file=token_file)


def test_token_sources_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert TOKEN_ENV == POD_TOKEN_ENV  # what the Kubernetes manifest sets is what serve reads
    secret = tmp_path / "token"
    secret.write_text("from-file\n")
    monkeypatch.setenv(TOKEN_ENV, " from-env ")
    assert _operator_token(_ns(token_file=str(secret))) == "from-file"
    assert TOKEN_ENV not in os.environ  # read once, inherited by nobody
    monkeypatch.setenv(TOKEN_ENV, " from-env ")
    assert _operator_token(_ns()) == "from-env"
    assert _operator_token(_ns(token="argv")) == "argv"
    assert _operator_token(_ns()) is None


@pytest.mark.parametrize(
    ("token", "content", "message"),
    [
        ("x", "y", "give the operator token once"),
        (None, "  \n", "is empty"),
        (None, None, "cannot read --token-file"),
    ],
)
def test_bad_token_sources_are_usage_errors(
    tmp_path: Path, token: str | None, content: str | None, message: str
) -> None:
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=message):
        _operator_token(_ns(token=token, token_file=str(path)))


@pytest.mark.server
@pytest.mark.parametrize("source", ["file", "env"])
def test_serve_takes_the_token_from_a_file_or_the_environment(tmp_path: Path, source: str) -> None:
    token = "op-secret-7f3a"
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    args = ["--mode", "production"]
    if source == "file":
        (tmp_path / "token").write_text(token + "\n")
        args += ["--token-file", str(tmp_path / "token")]
    else:
        env[TOKEN_ENV] = token
    port = free_port()
    cmd = [*MCPGYM, "serve", "mcpgym.examples.guess:GuessEnv", "--port", str(port), *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            assert proc.poll() is None, "mcpgym serve exited"
            try:
                return httpx.get(f"{url}/health", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(up, timeout=60, what="mcpgym serve")
        assert token.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert httpx.post(f"{url}/mcp", json=INIT, headers=ACCEPT).status_code == 401
        bearer = {**ACCEPT, "Authorization": f"Bearer {token}"}
        assert httpx.post(f"{url}/mcp", json=INIT, headers=bearer).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_k8s_manifest_without_the_extra_is_one_line(tmp_path: Path) -> None:
    shadow = tmp_path / "kubernetes"  # an importable name that fails like a missing extra
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('No module named kubernetes')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    cli = subprocess.run(
        [*MCPGYM, "k8s", "manifest", "img:1"], capture_output=True, text=True, env=env, timeout=60
    )
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.strip().splitlines() == [
        "mcpgym k8s manifest: error: Kubernetes support needs: pip install 'mcpgym[kubernetes]'"
    ]
