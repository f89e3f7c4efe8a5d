"""Where a fetch may go: the start URL's site only, and (for an agent) no local or private address.

The name is resolved once, every address it has is checked, and the connection goes to the checked
addresses only, so nothing reaches a local address: a connection made first and refused after
told an agent which local ports are open ("Connection refused" for a closed one). A name that
resolves to a public address for the check and to 127.0.0.1 for the request (DNS rebinding) gets
no second lookup; the connected socket's peer is checked again all the same. Through a proxy
(HTTP_PROXY, HTTPS_PROXY; urllib ignores ALL_PROXY; NO_PROXY hosts are reached directly) the
socket's peer is the proxy, which is the user's own choice and may be on a private address: there
the target is checked instead, every address our own DNS gives for it, before the proxy is sent
anything. The proxy resolves the name again, so through a proxy a rebinding name is not caught.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import urllib.request
from typing import Any
from urllib.parse import urlsplit

__all__ = ["PrivateAddress", "check_url", "guarded_handlers", "same_site"]


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


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True


def _public_infos(host: str, port: int) -> list[Any]:
    """``getaddrinfo`` for ``host``, refused (PrivateAddress) if any of its addresses is not public."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    for info in infos:
        _refuse_private(str(info[4][0]), host)
    return infos


def check_url(url: str) -> None:
    """PrivateAddress if ``url``'s host is, or resolves to, a non-public address; nothing is sent.
    A name that cannot be looked up passes: fetching it says so."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if _literal(host):
        _refuse_private(host, host)
        return
    try:
        _public_infos(host, parts.port or (443 if parts.scheme == "https" else 80))
    except PrivateAddress:
        raise
    except (OSError, UnicodeError, ValueError):
        return


def _connect_public(address: tuple[str, int], timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
                    source_address: Any = None) -> socket.socket:  # fmt: skip
    """``socket.create_connection`` to the addresses of ``address`` that were checked, and only if
    all of them are public: no second lookup, so no answer that changed in between is used."""
    host, port = address
    last: OSError | None = None
    for family, kind, proto, _, sockaddr in _public_infos(host, port):
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:  # type: ignore[attr-defined]
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last or OSError(f"{host} has no address")


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
    if _literal(host):
        peers = [host]  # nothing to look up
    else:
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
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = _connect_public

    def connect(self) -> None:
        super().connect()
        _check(self.sock, self.host)


class _GuardedHTTPS(http.client.HTTPSConnection):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = _connect_public

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
