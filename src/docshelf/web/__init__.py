"""The web page: search, read the cited place, see a PDF page, look after the shelf.

Its face for the doors that serve it: `docshelf serve --http` at ``/`` beside ``/mcp``, and
`docshelf ui` on a loopback port of its own. The modules (and Starlette) load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docshelf.web.app import PageOptions, WebPage, page_app

__all__ = ["PageOptions", "WebPage", "page_app"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from docshelf.web import app

        value = getattr(app, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
