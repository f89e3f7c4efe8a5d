"""`docshelf://status` changes, told to the clients that asked: 2026 clients through their
`subscriptions/listen` stream, 2025-11-25 clients through `resources/subscribe` and a
`notifications/resources/updated` on their session.

The index changes under a server by its own writes (ingest, forget, reindex: told at once) and
by other writers (`docshelf index`, a watcher of `serve --watch`): a poll of the index's
generation (every few seconds, once the index is open) tells those.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated, ServerEvent
from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

from docshelf.errors import DocshelfError
from docshelf.shelf import SCHEME

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from docshelf.shelf import Shelf

__all__ = ["STATUS_URI", "StatusFeed"]

log = logging.getLogger("docshelf.server")
STATUS_URI = SCHEME + "status"
POLL_S = 2.0  # how often the index's generation is read while a client listens


class _Bus(InMemorySubscriptionBus):
    """The SDK's in-process bus, counting its `subscriptions/listen` streams."""

    def __init__(self) -> None:
        super().__init__()
        self.listening = 0

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        unsubscribe = super().subscribe(listener)
        self.listening += 1
        done = False

        def once() -> None:
            nonlocal done
            if not done:
                done = True
                self.listening -= 1
            unsubscribe()

        return once


def _connection(ctx: Any) -> int:
    """Which client connection a request came on (one per stdio process or HTTP session)."""
    return id(getattr(ctx.session, "_connection", ctx.session))


class StatusFeed:
    """Who listens for `docshelf://status`, and telling them that it changed."""

    def __init__(self, shelf: Shelf, poll_s: float = POLL_S) -> None:
        self.shelf = shelf
        self.poll_s = poll_s
        self.bus = _Bus()
        # 2025-11-25 subscribers: a session proxy per connection (the SDK builds a proxy per request,
        # all sending on the connection's own channel), dropped when a send to it fails
        self.sessions: dict[int, Any] = {}
        self._seen: int | None = None
        self._polling = False

    def install(self, server: MCPServer) -> None:
        """Serve `resources/subscribe` and `resources/unsubscribe` (2025-11-25 clients), and
        declare no `listChanged` for lists that never change: the tools, prompts and resources a
        server offers are fixed when it starts (2026 clients were told they change)."""
        low = server._lowlevel_server

        async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
            if str(params.uri) == STATUS_URI:
                self.sessions[_connection(ctx)] = ctx.session
            return EmptyResult()

        async def unsubscribe(ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
            if str(params.uri) == STATUS_URI:
                self.sessions.pop(_connection(ctx), None)
            return EmptyResult()

        low.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
        low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
        derive = low.get_capabilities

        def capabilities(*args: Any, **kwargs: Any) -> Any:
            caps = derive(*args, **kwargs)
            for fixed in (caps.tools, caps.prompts, caps.resources):
                if fixed is not None:
                    fixed.list_changed = False
            return caps

        low.get_capabilities = capabilities  # type: ignore[method-assign]

    @property
    def listened(self) -> bool:
        return self.bus.listening > 0 or len(self.sessions) > 0

    async def changed(self) -> None:
        """Tell every listener that `docshelf://status` changed (never raises)."""
        with contextlib.suppress(DocshelfError):
            self._seen = await anyio.to_thread.run_sync(self.shelf.generation)
        await self.bus.publish(ResourceUpdated(uri=STATUS_URI))
        for key, session in list(self.sessions.items()):
            try:
                await session.send_resource_updated(STATUS_URI)
            except Exception:  # the client went away
                log.debug("resource update not sent", exc_info=True)
                self.sessions.pop(key, None)

    async def poll(self) -> None:
        """Read the index's generation every ``poll_s`` once the index is open (one small read;
        a listener's baseline is always fresh), and tell the listeners when another writer
        changed it. One poll per server, however many sessions run it."""
        if self._polling:
            return
        self._polling = True
        try:
            while True:
                if self.shelf.is_open:  # opening it is the loader's job, at the first request
                    with contextlib.suppress(DocshelfError):
                        now = await anyio.to_thread.run_sync(self.shelf.generation)
                        if self._seen is not None and now != self._seen and self.listened:
                            await self.changed()
                        self._seen = now
                await anyio.sleep(self.poll_s)
        finally:
            self._polling = False

    @contextlib.asynccontextmanager
    async def lifespan(self, server: MCPServer) -> AsyncIterator[None]:
        """The server's lifespan: the poll runs beside it."""
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.poll)
            try:
                yield None
            finally:
                tasks.cancel_scope.cancel()
