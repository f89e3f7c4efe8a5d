"""create_server: the MCP server over one docshelf Shelf.

Start-up stays fast (an MCP client waits on initialize and tools/list): this module and the tool
modules import no numpy/tantivy. The shelf opens the index and loads the embedding model on a
background thread; handlers wait for the index there, and search goes keyword-only while the
model is still loading.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer

from docshelf import __version__
from docshelf.errors import DocshelfError
from docshelf.server.instructions import instructions
from docshelf.server.notices import Notices

if TYPE_CHECKING:
    from docshelf.config import Settings
    from docshelf.shelf import Shelf

__all__ = ["build_server", "create_server"]

log = logging.getLogger("docshelf.server")


def build_server(settings: Settings, source: Shelf | None = None) -> tuple[MCPServer, Shelf]:
    """The server and its shelf (the CLI closes the shelf on exit).

    ``source`` is a shelf to serve (tests pass one with a fake embedder); without one
    a shelf is opened over ``settings``. With no index yet the server still starts: every tool
    answers what to run; with a store that cannot be opened (damaged file, unreachable server) it
    starts too, its instructions and every tool call saying why.
    """
    from docshelf.server.feed import StatusFeed
    from docshelf.server.icons import server_icons
    from docshelf.server.protocol import install_protocol_fixes
    from docshelf.server.resources import register_prompts, register_resources
    from docshelf.server.tools import register_read_tools
    from docshelf.server.write_tools import register_write_tools
    from docshelf.shelf import Shelf

    shelf = source or Shelf(settings)
    broken: str | None = None
    try:
        summary = shelf.summary() if shelf.exists() else None
    except DocshelfError as exc:
        # a damaged or unreachable store: serve anyway, so the agent can tell the user what to do
        # (a server that exits shows the client only "connection closed")
        log.error("%s", exc)
        summary, broken = None, str(exc)
    feed = StatusFeed(shelf)
    server: MCPServer = MCPServer(
        "docshelf",
        title="docshelf",
        description="Local-first hybrid, multilingual document search with citations",
        instructions=instructions(shelf.settings, summary, broken),
        version=__version__,
        icons=server_icons(),
        log_level="WARNING",
        subscriptions=feed.bus,
        lifespan=feed.lifespan,
    )
    feed.install(server)
    Notices().install(server)
    register_read_tools(server, shelf)
    if not settings.server.read_only:
        register_write_tools(server, shelf, feed)
    if settings.answer.model:  # ask_question only when an LLM is configured; its client is built per call
        from docshelf.server.ask_tool import register_answer_tool

        register_answer_tool(server, shelf)
    register_resources(server, shelf)
    register_prompts(server, shelf)
    install_protocol_fixes(server)
    if summary is not None:
        server.middleware.append(_StartWhenAsked(shelf))
    return server, shelf


# what a client sends before it asks for anything: the index and the model need not be ready yet
_HANDSHAKE = frozenset({"server/discover", "initialize", "notifications/initialized", "ping"})


class _StartWhenAsked:
    """Opens the index and loads the model on the shelf's background thread at the first message
    past the handshake: started earlier, the loader's imports (numpy, tantivy, onnxruntime) take
    turns with the handshake's for the interpreter, and `tools/list` came ~0.1 s later."""

    def __init__(self, shelf: Shelf) -> None:
        self.shelf = shelf
        self.started = False

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if not self.started and ctx.method not in _HANDSHAKE:
            self.started = True
            self.shelf.start()
        return await call_next(ctx)


def create_server(settings: Settings, source: Shelf | None = None) -> MCPServer:
    """Build the MCP server over the index in ``settings.store.data_dir`` (or ``source``).

    Without an index there yet it starts anyway and every tool answers what to run.
    """
    return build_server(settings, source)[0]
