"""The web UI's server side, in-process: off by default, config.json, CSP, root path, budget.

The browser tests (marker `web`) are in test_web_browser.py.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from webenv import WebEnv

from mcpgym.examples.guess import GuessEnv
from mcpgym.servers import create_app
from mcpgym.servers.cli.main import main
from mcpgym.servers.settings import ServerSettings

STATIC = Path(__file__).resolve().parents[2] / "servers" / "web" / "static"
EXTERNAL = re.compile(r"""(?:https?:|wss?:)?//[a-z0-9-]+\.[a-z]""", re.IGNORECASE)


@pytest.fixture
def web() -> Iterator[TestClient]:
    with TestClient(create_app(WebEnv, web=True), raise_server_exceptions=False) as client:
        yield client


def config_of(page_html: str) -> dict[str, Any]:
    """The config the page carries inline (the same object as /web/config.json)."""
    m = re.search(r'<script type="application/json" id="mcpgym-config">(.*?)</script>', page_html)
    assert m, "the page carries no inline config"
    return json.loads(m.group(1))


def test_web_is_off_by_default_and_not_imported() -> None:
    script = (
        "import sys\n"
        "from starlette.testclient import TestClient\n"
        "from mcpgym.servers import create_app\n"
        "from mcpgym.examples.guess import GuessEnv\n"
        "for mode in ('simulation', 'production'):\n"
        "    with TestClient(create_app(GuessEnv, mode=mode)) as c:\n"
        "        codes = [c.get(p).status_code for p in ('/web', '/web/', '/web/config.json',"
        " '/web/app.js')]\n"
        "        assert codes == [404] * 4, (mode, codes)\n"
        "assert not any(m.startswith('mcpgym.servers.web') for m in sys.modules), 'imported'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_config_json(web: TestClient) -> None:
    res = web.get("/web/config.json")
    assert res.status_code == 200
    cfg = res.json()
    assert cfg["name"] == "WebEnv" and cfg["version"] == "0.1.0" and cfg["mode"] == "simulation"
    assert cfg["transport"] == "ws" and cfg["paths"] == {"ws": "/ws", "mcp": "/mcp"}
    assert cfg["mcpgym_version"]
    assert cfg["limits"]["max_sessions"] == ServerSettings().max_sessions
    assert cfg["limits"]["max_frame_bytes"] > 0
    assert {"action", "observation", "state"} <= cfg["schemas"].keys()
    assert cfg["schemas"]["state"]["title"] == "WebState"
    tools = {t["name"]: t for t in cfg["tools"]}
    assert set(tools) == {"add", "plan", "peek", "wipe", "finish"}
    assert tools["peek"]["annotations"] == {"readOnlyHint": True}
    assert "$defs" in tools["plan"]["input_schema"]
    assert cfg["tasks"] == [] and cfg["auth"] is None
    assert config_of(web.get("/web").text) == cfg


def test_config_honours_the_mode_of_tools() -> None:
    with TestClient(create_app(GuessEnv, web=True)) as client:
        assert {t["name"] for t in client.get("/web/config.json").json()["tools"]} == {
            "guess",
            "hint",
        }


def test_production_config_hides_tools_and_simulation_routes_are_gone() -> None:
    app = create_app(GuessEnv, mode="production", web=True, token="s3cret")
    with TestClient(app, raise_server_exceptions=False) as client:
        cfg = client.get("/web/config.json").json()
        assert cfg["mode"] == "production" and cfg["transport"] == "mcp"
        assert cfg["paths"] == {"ws": None, "mcp": "/mcp"} and cfg["auth"] == "bearer"
        assert cfg["tools"] == [] and cfg["schemas"] == {} and cfg["tasks"] == []
        for path in ("/reset", "/step"):
            assert client.post(path, json={}).status_code == 404
        assert client.get("/state").status_code == 404
        assert client.get("/web").status_code == 200


@pytest.mark.parametrize(
    "path", ["/web", "/web/", "/web/config.json", "/web/app.js", "/web/web.css"]
)
def test_csp_on_every_web_response(web: TestClient, path: str) -> None:
    res = web.get(path)
    assert res.status_code == 200
    csp = res.headers["content-security-policy"]
    assert csp.startswith("default-src 'self'")
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp and "*" not in csp
    assert res.headers["x-content-type-options"] == "nosniff"


def test_assets_types_etag_and_unknown_names(web: TestClient) -> None:
    js = web.get("/web/app.js")
    assert js.headers["content-type"].startswith("text/javascript")
    assert web.get("/web/web.css").headers["content-type"].startswith("text/css")
    again = web.get("/web/app.js", headers={"if-none-match": js.headers["etag"]})
    assert again.status_code == 304
    for bad in ("nope.js", "index.html", "..%2Froutes.py", "%2e%2e%2fconfig.py", "app.js.map"):
        res = web.get(f"/web/{bad}")
        assert res.status_code == 404, bad
        assert "<" not in res.text  # never the page, never an HTML error
    assert web.post("/web").status_code == 405


def test_root_path_prefixes_every_link() -> None:
    app = create_app(WebEnv, web=True)
    with TestClient(app, root_path="/gym/") as client:
        page = client.get("/web").text
        assert 'href="/gym/web/web.css"' in page and 'src="/gym/web/app.js"' in page
        assert 'data-root="/gym"' in page
        cfg = client.get("/web/config.json").json()
        assert cfg["paths"] == {"ws": "/gym/ws", "mcp": "/gym/mcp"} and cfg["root"] == "/gym"
        assert config_of(page)["paths"]["ws"] == "/gym/ws"


def test_root_path_is_escaped() -> None:
    with TestClient(create_app(WebEnv, web=True), root_path='/a"><b') as client:
        page = client.get("/web").text
        assert '"><b' not in page.split("<script")[0]
        assert "/a&quot;&gt;&lt;b/web/app.js" in page


def test_inline_config_cannot_end_its_script_element() -> None:
    class Hostile(WebEnv):
        description = "</script><script>alert(1)</script><!--"

    with TestClient(create_app(Hostile, web=True)) as client:
        page = client.get("/web").text
        assert page.count("</script>") == 2  # the config block's and app.js's own
        assert config_of(page)["description"] == Hostile.description


def test_static_budget_and_hosts() -> None:
    files = sorted(p for p in STATIC.iterdir() if p.is_file())
    assert {p.name for p in files} == {"index.html", "app.js", "form.js", "view.js", "web.css"}
    total = sum(len(gzip.compress(p.read_bytes(), 9)) for p in files)
    assert total <= 60 * 1024, f"{total} bytes gzipped"
    page = (STATIC / "index.html").read_text()
    subresources = re.findall(r'(?:src|href)="(%ROOT%[^"]*)"', page)
    assert len(subresources) + 2 <= 5  # + the page itself + form.js/view.js imported by app.js
    for p in files:
        text = p.read_text()
        assert not EXTERNAL.search(text), f"{p.name} names an external host"
        if p.suffix == ".js":
            for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
                assert sink not in text, f"{p.name} uses {sink}: render with textContent only"
            imports = re.findall(r'from "(\./[^"]+)"', text)
            assert all((STATIC / name[2:]).exists() for name in imports)


def test_web_tasks_are_offered_with_their_prompts() -> None:
    from calendar_gym import CalendarEnv

    app = create_app(CalendarEnv, web=True, web_tasks="calendar_gym.suite:specs")
    with TestClient(app) as client:
        tasks = client.get("/web/config.json").json()["tasks"]
    ids = {t["id"] for t in tasks}
    assert "t1-create-haircut/natural/structured" in ids
    task = next(t for t in tasks if t["id"] == "t1-create-haircut/natural/structured")
    assert task["reset"]["task"] == "t1-create-haircut" and "haircut" in task["prompt"].lower()


@pytest.mark.parametrize(
    "target", ["nope_module:specs", "calendar_gym.suite:nope", "webenv:WebEnv.reward"]
)
def test_bad_web_tasks_stop_the_server_at_start(target: str) -> None:
    with pytest.raises(ValueError):
        create_app(WebEnv, web=True, web_tasks=target)


def test_cli_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = capsys.readouterr().out
    assert "--web" in text and "--root-path" in text and "--web-tasks" in text
    code = main(["serve", "webenv:WebEnv", "--web", "--web-tasks", "nope_module:x"])
    assert code == 2
    assert "nope_module" in capsys.readouterr().err


def test_docs_example_runs() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "web.md"
    (block,) = re.findall(r"```python\n(.*?)```", docs.read_text(), flags=re.S)
    exec(compile(block, "docs/web.md", "exec"), {"__name__": "docs_web"})
