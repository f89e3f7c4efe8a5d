"""What the HTTP server checks before anything else: that a connection sends its request head in
time, and that Host and Origin are well formed and name this server (case-insensitively).

The MCP SDK's own DNS-rebinding check matches prefixes ("127.0.0.1:" + anything), so
``Host: 127.0.0.1:8765@evil.com`` passed it and ``Host: LOCALHOST:8765`` did not; here the
headers are parsed, refused when malformed, and handed on lower-cased.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from typing import Any

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HeaderTimeoutProtocol", "HostGuard", "parse_host", "parse_origin"]

_NAME = r"(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)"
_HOST = re.compile(rf"{_NAME}(?::(\d{{1,5}}))?")
_ORIGIN = re.compile(rf"(https?)://{_NAME}(?::(\d{{1,5}}))?")


def parse_host(value: str) -> tuple[str, str | None] | None:
    """(name, port) of a Host header, lower-cased; None when it is not ``name[:port]``."""
    m = _HOST.fullmatch(value.strip().lower())
    return None if m is None else (m.group(1), m.group(2))


def parse_origin(value: str) -> tuple[str, str, str | None] | None:
    """(scheme, name, port) of an Origin header, lower-cased; None when it is not
    ``scheme://name[:port]`` (user info, paths and "null" are refused)."""
    m = _ORIGIN.fullmatch(value.strip().lower())
    return None if m is None else (m.group(1), m.group(2), m.group(3))


def _names(patterns: Iterable[str]) -> set[str]:
    """Host names of allowed-host patterns such as ``localhost:*`` or ``example.com:8080``."""
    out = set()
    for pattern in patterns:
        parsed = parse_host(pattern[:-2] if pattern.endswith(":*") else pattern)
        if parsed is not None:
            out.add(parsed[0])
    return out


class HostGuard:
    """ASGI wrapper: 421 for a malformed or foreign Host, 403 for a malformed or foreign Origin;
    both are passed on lower-cased, for the SDK's own (exact) check after this one."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str], origins: Iterable[str]) -> None:
        self.app = app
        self.hosts = _names(hosts)
        self.origin_hosts = _names(o.split("://", 1)[-1] for o in origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = []
        for key, raw in scope["headers"]:
            if key in (b"host", b"origin"):
                value = raw.decode("latin-1")
                if key == b"host":
                    host = parse_host(value)
                    ok, status, what = host is not None and host[0] in self.hosts, 421, "Host"
                else:
                    origin = parse_origin(value)
                    ok, status, what = origin is not None and origin[1] in self.origin_hosts, 403, "Origin"
                if not ok:
                    refusal = PlainTextResponse(f"Invalid {what} header", status_code=status)
                    await refusal(scope, receive, send)
                    return
                raw = value.strip().lower().encode("latin-1")
            headers.append((key, raw))
        await self.app({**scope, "headers": headers}, receive, send)


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head is not in after
    ``header_timeout_s`` (set on the class): uvicorn itself waits forever for one, so half-open
    connections pile up until the process runs out of sockets."""

    header_timeout_s = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_cycle: object = None

    def _arm(self) -> None:
        self._disarm()
        self._head_cycle = self.cycle  # a new cycle means the head arrived
        self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.cycle is self._head_cycle and not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_timer is not None and self.cycle is not self._head_cycle:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()  # the next request's head must come in time too

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
