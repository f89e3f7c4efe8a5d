"""The MCP server: tools, resources and prompts over a docshelf shelf (stdio or streamable HTTP)."""

from docshelf.server.app import build_server, create_server

__all__ = ["build_server", "create_server"]
