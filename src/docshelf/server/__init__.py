"""The MCP server: tools, resources and prompts over a docshelf index (stdio or streamable HTTP)."""

from docshelf.server.app import ServerState, build_server, create_server

__all__ = ["ServerState", "build_server", "create_server"]
