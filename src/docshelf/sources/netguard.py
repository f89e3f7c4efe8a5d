"""Where a fetch may go: the start URL's site only, and (for an agent) no local or private address.

The address is checked on the connected socket, not on a DNS answer looked up beforehand, so a
name that resolves to a public address for the check and to 127.0.0.1 for the request (DNS
rebinding) is caught too. Through a proxy (HTTP_PROXY, HTTPS_PROXY; urllib ignores ALL_PROXY;
NO_PROXY hosts are reached directly) the socket's peer is the proxy, which is the user's own
choice and may be on a private address: there the target is checked instead, every address our
own DNS gives for it, before the proxy is sent anything. The proxy resolves the name again, so
through a proxy a rebinding name is not caught.
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


_ALLOW = "set web.agent_private_hosts = true to allow it, or index the URL with `docshelf index`"


def _refuse_private(peer: str, host: str) -> None:
    address = ipaddress.ip_address(peer.split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not address.is_global or address.is_multicast:
        raise PrivateAddress(
            f"{host} is a local or private address ({address}): an agent's ingest may not fetch "
            f"from it; {_ALLOW}"
        )


def _check(sock: socket.socket | None, host: str) -> None:
    if sock is None:
        return
    try:
        _refuse_private(sock.getpeername()[0], host)
    except PrivateAddress:
        sock.close()
        raise


def _check_target(req: urllib.request.Request) -> None:
    """Refuse a proxied request whose target host is (or resolves to) a non-public address."""
    parts = urlsplit(req.full_url)
    host = parts.hostname or ""
    try:
        ipaddress.ip_address(host.split("%")[0])
        peers = [host]  # a literal address: nothing to look up
    except ValueError:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            # the proxy might know the name, but then so might an intranet's: unchecked is refused
            raise PrivateAddress(
                f"{host} could not be looked up ({exc.strerror or exc}) to check that it is public "
                f"before fetching it through the proxy; {_ALLOW}"
            ) from None
        peers = [str(info[4][0]) for info in infos]
    for peer in peers:
        _refuse_private(peer, host)


def _proxied(req: urllib.request.Request) -> bool:
    # ProxyHandler has run: plain HTTP asks the proxy for the full URL, HTTPS tunnels with CONNECT
    return req.has_proxy() or getattr(req, "_tunnel_host", None) is not None


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
        if _proxied(req):
            _check_target(req)
            return super().http_open(req)
        return self.do_open(_GuardedHTTP, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> Any:
        if _proxied(req):
            _check_target(req)  # before the CONNECT, which names the target to the proxy
            return super().https_open(req)
        return self.do_open(_GuardedHTTPS, req, context=self._context)  # type: ignore[attr-defined]


def guarded_handlers() -> list[urllib.request.BaseHandler]:
    """Handlers for ``build_opener`` that refuse connections to non-public addresses (through a
    proxy: requests for non-public targets)."""
    return [_HTTPHandler(), _HTTPSHandler()]


def _host(url: str) -> str:
    host = (urlsplit(url).hostname or "").rstrip(".")
    return host.removeprefix("www.")


def same_site(url: str, other: str) -> bool:
    """Same host, give or take ``www.`` and the scheme (http -> https redirects are fine)."""
    return _host(url) == _host(other) != ""
