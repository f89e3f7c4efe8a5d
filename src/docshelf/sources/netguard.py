"""Where a fetch may go: the start URL's site only, and (for an agent) no local or private address.

The address is checked on the connected socket, not on a DNS answer looked up beforehand, so a
name that resolves to a public address for the check and to 127.0.0.1 for the request (DNS
rebinding) is caught too. Through a proxy, the proxy's address is the one checked.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import urllib.request
from typing import Any
from urllib.parse import urlsplit

__all__ = ["PrivateAddress", "guarded_handlers", "same_site"]


class PrivateAddress(OSError):
    """The connection reached a loopback, private, link-local or otherwise non-public address."""


def _check(sock: socket.socket | None, host: str) -> None:
    if sock is None:
        return
    peer = sock.getpeername()[0]
    address = ipaddress.ip_address(peer.split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not address.is_global or address.is_multicast:
        sock.close()
        raise PrivateAddress(
            f"{host} is a local or private address ({address}): an agent's ingest may not fetch from "
            "it; set web.agent_private_hosts = true to allow it, or index the URL with `docshelf index`"
        )


class _GuardedHTTP(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _check(self.sock, self.host)


class _GuardedHTTPS(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()  # TCP and TLS: nothing of the request is sent before the check
        _check(self.sock, self.host)


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_GuardedHTTP, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_GuardedHTTPS, req, context=self._context)  # type: ignore[attr-defined]


def guarded_handlers() -> list[urllib.request.BaseHandler]:
    """Handlers for ``build_opener`` that refuse connections to non-public addresses."""
    return [_HTTPHandler(), _HTTPSHandler()]


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").rstrip(".")
    return host.removeprefix("www.")


def same_site(url: str, other: str) -> bool:
    """Same host, give or take ``www.`` and the scheme (http -> https redirects are fine)."""
    return _host(url) == _host(other) != ""
