"""`/web` routes: the page, its static assets and `config.json`, all with a strict CSP."""

from __future__ import annotations

import hashlib
import html
import json
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from mcpgym.servers.settings import ServerSettings
from mcpgym.servers.web.config import load_tasks, web_config

__all__ = ["ASSETS", "CSP", "web_routes"]

# Everything comes from this server; images may be inline (tool results carry base64 images).
CSP = (
    "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'; object-src 'none'"
)
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
}


def _load_assets() -> dict[str, bytes]:
    folder = resources.files("mcpgym.servers.web") / "static"
    return {
        entry.name: entry.read_bytes()
        for entry in folder.iterdir()
        if entry.is_file() and any(entry.name.endswith(ext) for ext in _TYPES)
    }


ASSETS: dict[str, bytes] = _load_assets()
if not {"index.html", "app.js"} <= ASSETS.keys():  # package data left out of the wheel
    raise RuntimeError("mcpgym.servers.web: static/index.html and app.js are missing")
"""The page's files by name, read once (a few tens of KiB)."""
_ETAGS = {name: '"' + hashlib.sha256(body).hexdigest()[:16] + '"' for name, body in ASSETS.items()}


def _root(request: Request) -> str:
    """The proxy path prefix (`--root-path`), never ending in '/'."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def _page(request: Request, config: dict[str, Any]) -> Response:
    """The page, with the proxy prefix in its links and the config inline (one request less).

    The config is a JSON data block: `<` is escaped so no string in it can end the element.
    """
    data = json.dumps(config, ensure_ascii=False).replace("<", "\\u003c")
    body = (
        ASSETS["index.html"]
        .decode("utf-8")
        .replace("%ROOT%", html.escape(_root(request)))
        .replace("%CONFIG%", data)
    )
    return Response(body, media_type=_TYPES[".html"], headers=_HEADERS)


async def asset(request: Request) -> Response:
    """`GET /web/{name}`: one of the page's static files (404 for anything else)."""
    name = request.path_params["name"]
    body = ASSETS.get(name)
    if body is None or name == "index.html":
        return JSONResponse(
            {"error": {"code": "NOT_FOUND", "message": f"no such file: {name}"}},
            status_code=404,
            headers=_HEADERS,
        )
    etag = _ETAGS[name]
    headers = {**_HEADERS, "ETag": etag}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    media = next(t for ext, t in _TYPES.items() if name.endswith(ext))
    return Response(body, media_type=media, headers=headers)


def web_routes(settings: ServerSettings) -> list[BaseRoute]:
    """The routes `create_app` adds when the web UI is enabled.

    The tasks (`settings.web_tasks`) are loaded here, so a bad target fails at start-up with
    a `ValueError`, not on the first page load.
    """
    tasks = load_tasks(settings.web_tasks) if settings.mode == "simulation" else []

    async def config(request: Request) -> Response:
        """`GET /web/config.json`: what the page needs to know (see `config.web_config`)."""
        body = web_config(request.app, _root(request), tasks)
        return JSONResponse(body, headers=_HEADERS)

    async def page(request: Request) -> Response:
        """`GET /web`: the page."""
        return _page(request, web_config(request.app, _root(request), tasks))

    return [
        Route("/web", page, methods=["GET"]),
        Route("/web/", page, methods=["GET"]),
        Route("/web/config.json", config, methods=["GET"]),
        Route("/web/{name}", asset, methods=["GET"]),
    ]
