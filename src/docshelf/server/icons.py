"""The server's and the tools' icons: SVG files shipped in the package, sent as data: URIs (a client
shows them without fetching anything, and nothing leaves the machine to get them)."""

from __future__ import annotations

import base64
from functools import cache
from importlib import resources

from mcp_types import Icon

__all__ = ["server_icons", "tool_icons"]

# a tool's icon file (icons/NAME.svg); a tool not named here has none
_TOOLS = {
    "search": "search", "grep": "grep", "read_passage": "read", "read_document": "read",
    "list_documents": "read", "index_status": "status", "ingest": "add", "forget": "remove",
    "reindex": "sync", "ask_question": "search",
}  # fmt: skip


@cache
def _icon(name: str) -> Icon:
    svg = resources.files("docshelf.server").joinpath("icons", f"{name}.svg").read_bytes()
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    return Icon(src=uri, mime_type="image/svg+xml", sizes=["any"])


def server_icons() -> list[Icon]:
    return [_icon("docshelf")]


def tool_icons(tool: str) -> list[Icon] | None:
    name = _TOOLS.get(tool)
    return None if name is None else [_icon(name)]
