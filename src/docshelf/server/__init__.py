"""The MCP server: tools, resources and prompts over a docshelf shelf (stdio or streamable HTTP).

Its face for the CLI, which starts it (`docshelf serve`), serves the web page alone on loopback
(`docshelf ui`) and registers it with clients (`docshelf install`); the modules load on first
use, so `docshelf install` loads no MCP server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docshelf.server.app import build_server, create_server
    from docshelf.server.http import serve_http, serve_page
    from docshelf.server.install import apply_plan, plan_install, server_command
    from docshelf.server.token import load_or_create_token

__all__ = [
    "apply_plan",
    "build_server",
    "create_server",
    "load_or_create_token",
    "plan_install",
    "serve_http",
    "serve_page",
    "server_command",
]

_LAZY = {
    "build_server": "docshelf.server.app",
    "create_server": "docshelf.server.app",
    "load_or_create_token": "docshelf.server.token",
    "serve_http": "docshelf.server.http",
    "serve_page": "docshelf.server.http",
    "apply_plan": "docshelf.server.install",
    "plan_install": "docshelf.server.install",
    "server_command": "docshelf.server.install",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
