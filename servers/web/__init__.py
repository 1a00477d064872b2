"""The browser UI at `/web`: a person plays the environment as an agent would.

Enabled by `mcpgym serve ... --web` (`ServerSettings.web`); when it is off this package is never
imported and no `/web` route exists. The page is a few static files (plain ES modules, no build
step) shipped as package data; it talks only to `/ws` (simulation) or `/mcp` (production), and
reads its settings from `/web/config.json` (see `config.py`). See docs/web.md.

Example:
    >>> from mcpgym.servers.settings import ServerSettings
    >>> from mcpgym.servers.web import web_routes
    >>> sorted(r.path for r in web_routes(ServerSettings(web=True)))
    ['/web', '/web/', '/web/config.json', '/web/{name}']
"""

from __future__ import annotations

from mcpgym.servers.web.routes import CSP, web_routes

__all__ = ["CSP", "web_routes"]
