"""An agent's fetch through an HTTP(S) proxy: the target host is checked (by our own DNS answer),
not the proxy's address; a proxy on 127.0.0.1 is the user's own and fine; NO_PROXY is honoured.
No network: the "proxy" is a local server and DNS is a table."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from docshelf.config import WebSettings
from docshelf.sources.web import Fetcher, FetchError
from localhttp import Reply, Server, serve

DNS = {
    "docs.example": ["93.184.216.34"],
    "intranet.example": ["10.0.0.5"],
    "mixed.example": ["93.184.216.34", "10.0.0.6"],  # one private answer is enough to refuse
}
_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """A proxy on 127.0.0.1 (answering GETs for any host), set in the environment, and fake DNS."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "nowhere.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if host in DNS:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in DNS[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    page = {"/a": lambda r: Reply(200, b"via proxy", {"Content-Type": "text/plain"})}
    with serve(page) as srv:  # type: ignore[arg-type]
        monkeypatch.setenv("HTTP_PROXY", srv.base)
        monkeypatch.setenv("HTTPS_PROXY", srv.base)
        yield srv


def _agent() -> Fetcher:
    return Fetcher(WebSettings(), private_ok=False)


def test_through_a_local_proxy_a_public_target_is_fetched(proxy: Server) -> None:
    """The proxy's own address (127.0.0.1) was checked, so every agent fetch was refused."""
    assert _agent().get("http://docs.example/a").body == b"via proxy"
    assert proxy.paths() == ["http://docs.example/a"]
    with pytest.raises(FetchError, match="Tunnel connection failed") as info:
        _agent().get("https://docs.example/a")
    assert "private" not in str(info.value)
    assert proxy.paths()[-1] == "CONNECT docs.example:443"


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://intranet.example/a", "10.0.0.5"),
        ("https://intranet.example/a", "10.0.0.5"),
        ("http://mixed.example/a", "10.0.0.6"),
        ("http://10.1.2.3/a", "10.1.2.3"),
        ("https://[::1]:8443/a", "::1"),
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
    ],
)
def test_through_a_proxy_a_private_target_is_refused_before_the_proxy_hears_of_it(
    proxy: Server, url: str, address: str
) -> None:
    """A proxy's address was checked instead of the target's: a public proxy could reach the
    intranet, and an HTTPS target was named to the proxy (CONNECT) before any check."""
    host = re.escape(urlsplit(url).hostname or "")
    with pytest.raises(FetchError, match=rf"{host} is a local or private address \({re.escape(address)}\)"):
        _agent().get(url)
    assert proxy.paths() == []
    assert Fetcher(WebSettings()).get("http://intranet.example/a").body == b"via proxy"  # the user's may


def test_through_a_proxy_a_target_that_does_not_resolve_is_refused(proxy: Server) -> None:
    with pytest.raises(FetchError, match=r"nowhere\.example could not be looked up"):
        _agent().get("http://nowhere.example/a")
    assert proxy.paths() == []


def test_no_proxy_hosts_are_reached_directly_and_checked_on_the_socket(
    proxy: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "localhost")
    with serve({"/a": lambda r: Reply(200, b"direct", {"Content-Type": "text/plain"})}) as direct:
        url = direct.base.replace("127.0.0.1", "localhost") + "/a"
        with pytest.raises(FetchError, match=r"local or private address \(127\.0\.0\.1\)"):
            _agent().get(url)
        assert direct.paths() == [] and proxy.paths() == []
        assert Fetcher(WebSettings()).get(url).body == b"direct"
        assert proxy.paths() == []  # bypassed, not proxied
