"""MCP log notifications (`notifications/message`): what an agent should hear about.

Skipped files, index damage found (and repaired) at start, and model failures reach the client,
not only stderr. Records of the `docshelf` loggers at WARNING and above are kept until the next
request, whose response stream carries them (a 2026 client opts in per request with the log-level
`_meta` key; a 2025 client gets what its own `logging/setLevel` lets through, `info` and up by
default: the level is kept per client connection, as several HTTP clients share one server).
"""

from __future__ import annotations

import collections
import logging
import warnings
import weakref
from typing import TYPE_CHECKING, Any, get_args

from mcp.server.connection import allowed_log_levels
from mcp_types import EmptyResult, LoggingLevel, SetLevelRequestParams

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context, MCPServer

__all__ = ["Notices"]

LEVELS: tuple[str, ...] = get_args(LoggingLevel)  # debug ... emergency, ascending
_BY_SERVER: weakref.WeakKeyDictionary[Any, Notices] = weakref.WeakKeyDictionary()
_FROM_PYTHON = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warning",
    logging.ERROR: "error",
}


class Notices(logging.Handler):
    """Collects the `docshelf` log records for the client and sends them with the next response."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.pending: collections.deque[tuple[str, str, str]] = collections.deque(maxlen=50)
        self.thresholds: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    def install(self, server: MCPServer) -> Notices:
        """Declare the logging capability (a `logging/setLevel` handler) and listen to docshelf's logs."""

        async def set_level(ctx: Any, params: SetLevelRequestParams) -> EmptyResult:
            self.thresholds[_client(ctx.session)] = params.level
            return EmptyResult()

        server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
        logging.getLogger("docshelf").addHandler(self)
        _BY_SERVER[server] = self
        return self

    @staticmethod
    def of(ctx: Context) -> Notices | None:
        """The notices of the server that handles ``ctx``."""
        try:
            return _BY_SERVER.get(ctx.mcp_server)
        except (ValueError, TypeError):  # a Context built without a server
            return None

    def emit(self, record: logging.LogRecord) -> None:
        level = _FROM_PYTHON.get(record.levelno, "critical" if record.levelno > logging.ERROR else "warning")
        try:
            text = record.getMessage()
        except Exception:  # a bad format string must not break the logging call
            text = str(record.msg)
        self.pending.append((level, record.name, " ".join(text.split())[:2000]))

    def wanted(self, level: str, client: Any) -> bool:
        """Whether ``client`` (a connection) asked for ``level`` with `logging/setLevel`."""
        return LEVELS.index(level) >= LEVELS.index(self.thresholds.get(client, "info"))

    async def send(self, ctx: Context, level: str, text: str, logger: str = "docshelf") -> None:
        """One `notifications/message` on this request's stream (best effort, never raises)."""
        session = ctx.request_context.session
        if not self.wanted(level, _client(session)):
            return
        try:
            with warnings.catch_warnings():  # deprecated at 2026 in favour of per-request opt-in
                warnings.simplefilter("ignore")
                await session.send_log_message(level, text, logger, related_request_id=ctx.request_id)  # type: ignore[arg-type]
        except Exception:
            logging.getLogger("docshelf.server").debug("log notification not sent", exc_info=True)

    def takes(self, ctx: Context, level: str) -> bool:
        """Whether this request may receive a message at ``level`` (its client's level on 2025
        sessions, the request's own log-level `_meta` opt-in on 2026 ones)."""
        request = ctx.request_context
        if level not in allowed_log_levels(request.protocol_version, request.meta):
            return False
        return self.wanted(level, _client(request.session))

    async def deliver(self, ctx: Context) -> None:
        """Send what was logged since the last request; what this request may not receive stays
        for the next one that may (it is news for every client, not for this one alone)."""
        left: list[tuple[str, str, str]] = []
        while self.pending:
            level, logger, text = self.pending.popleft()
            if self.takes(ctx, level):
                await self.send(ctx, level, text, logger)
            else:
                left.append((level, logger, text))
        self.pending.extendleft(reversed(left))

    def close(self) -> None:
        logging.getLogger("docshelf").removeHandler(self)
        super().close()


def _client(session: Any) -> Any:
    """The client connection behind a request's session (sessions are per request in SDK 2.x)."""
    return getattr(session, "_connection", session)
