"""Running shelf work from a handler: off the event loop, errors as isError results."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult

from docshelf.errors import DocshelfError
from docshelf.server.limits import tool_result

if TYPE_CHECKING:
    from docshelf.shelf import Shelf

__all__ = ["answer", "off_loop"]

T = TypeVar("T")


async def off_loop(shelf: Shelf, fn: Callable[[], T]) -> T:
    """Run blocking shelf work on a worker thread, once the index is open."""
    await shelf.opened()
    return await anyio.to_thread.run_sync(fn)


async def answer(shelf: Shelf, work: Callable[[], dict[str, Any]]) -> CallToolResult:
    """Run ``work`` off the event loop; a DocshelfError becomes an isError result that explains."""
    try:
        return tool_result(await off_loop(shelf, work))
    except DocshelfError as exc:
        raise ToolError(str(exc)) from exc
