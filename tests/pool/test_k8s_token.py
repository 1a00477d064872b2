"""`mcpgym k8s manifest --token-secret NAME [--token-file PATH]`: the pods read the operator token
from a Secret (as `$MCPGYM_OPERATOR_TOKEN`), never from an argument; with a file, the Secret
itself is printed first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.kubernetes]

pytest.importorskip("kubernetes.client")
yaml = pytest.importorskip("yaml")


def _manifest(*args: str) -> list[dict]:
    cmd = [sys.executable, "-m", "mcpgym.servers", "k8s", "manifest", "img:1", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return list(yaml.safe_load_all(out.stdout))


def test_the_token_comes_from_a_secret(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("op-token-91\n")
    docs = _manifest("--token-secret", "op", "--token-file", str(tmp_path / "t"))
    assert [d["kind"] for d in docs] == ["Secret", "Deployment", "Service"]
    assert docs[0]["metadata"]["name"] == "op" and docs[0]["stringData"] == {"token": "op-token-91"}
    container = docs[1]["spec"]["template"]["spec"]["containers"][0]
    assert {
        "name": "MCPGYM_OPERATOR_TOKEN",
        "valueFrom": {"secretKeyRef": {"name": "op", "key": "token"}},
    } in container["env"]
    assert "op-token-91" not in str(docs[1:])
    referenced = _manifest("--token-secret", "existing")
    assert [d["kind"] for d in referenced] == ["Deployment", "Service"]


def test_a_token_file_without_a_secret_name_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("x")
    cmd = [
        sys.executable,
        "-m",
        "mcpgym.servers",
        "k8s",
        "manifest",
        "img:1",
        "--token-file",
        str(tmp_path / "t"),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "needs --token-secret" in out.stderr
