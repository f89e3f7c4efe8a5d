"""Where a fetch may go: the start URL's site only, and (for an agent) no local or private address.

The address is checked on the connected socket, not on a DNS answer looked up beforehand, so a
name that resolves to a public address for the check and to 127.0.0.1 for the request (DNS
rebinding) is caught too. Through a proxy (http_proxy, https_proxy; no_proxy is honoured) the
socket leads to the proxy, which is the user's own setting and may well be on a private address:
there the target is checked instead, its literal address or every address its name resolves to
here (the proxy resolves it again, so rebinding is not caught; a name that does not resolve here
is left to the proxy).
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["PrivateAddress", "guarded_handlers", "same_site"]


class PrivateAddress(OSError):
    """The connection reached a loopback, private, link-local or otherwise non-public address."""


def _refuse(host: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not address.is_global or address.is_multicast:
        raise PrivateAddress(
            f"{host} is a local or private address ({address}): an agent's ingest may not fetch from "
            "it; set web.agent_private_hosts = true to allow it, or index the URL with `docshelf index`"
        )


def _check(sock: socket.socket | None, host: str) -> None:
    if sock is None:
        return
    peer = sock.getpeername()[0]
    try:
        _refuse(host, ipaddress.ip_address(peer.split("%")[0]))
    except PrivateAddress:
        sock.close()
        raise


def _check_target(host: str) -> None:
    """The target of a request sent through a proxy: its literal address, or each one its name has."""
    try:
        _refuse(host, ipaddress.ip_address(host.strip("[]").split("%")[0]))
        return
    except ValueError:
        pass  # a name
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return  # only the proxy knows it (split DNS): its own rules apply
    for info in infos:
        _refuse(host, ipaddress.ip_address(str(info[4][0]).split("%")[0]))


class _GuardedHTTP(http.client.HTTPConnection):
    check_peer = True  # False through a proxy: the target was checked instead

    def connect(self) -> None:
        super().connect()
        if self.check_peer:
            _check(self.sock, self.host)


class _GuardedHTTPS(http.client.HTTPSConnection):
    check_peer = True

    def connect(self) -> None:
        super().connect()  # TCP and TLS: nothing of the request is sent before the check
        if self.check_peer:
            _check(self.sock, self.host)


def _connection(
    kind: type[_GuardedHTTP] | type[_GuardedHTTPS], req: urllib.request.Request
) -> Callable[..., Any]:
    """``kind``, or for a request through a proxy a maker of ``kind`` that leaves the proxy's
    address alone, once the target is checked."""
    target = urlsplit(req.full_url).hostname or ""
    via = urlsplit(f"//{req.host}").hostname or ""
    if not getattr(req, "_tunnel_host", None) and via == target:
        return kind
    _check_target(target)

    def make(host: str, **kwargs: Any) -> Any:
        conn = kind(host, **kwargs)
        conn.check_peer = False
        return conn

    return make


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_connection(_GuardedHTTP, req), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_connection(_GuardedHTTPS, req), req, context=self._context)  # type: ignore[attr-defined]


def guarded_handlers() -> list[urllib.request.BaseHandler]:
    """Handlers for ``build_opener`` that refuse connections to non-public addresses."""
    return [_HTTPHandler(), _HTTPSHandler()]


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").rstrip(".")
    return host.removeprefix("www.")


def same_site(url: str, other: str) -> bool:
    """Same host, give or take ``www.`` and the scheme (http -> https redirects are fine)."""
    return _host(url) == _host(other) != ""
