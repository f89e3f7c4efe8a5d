"""An agent's URL ingest and local addresses: refused before any connection, in the same words for
an open and a closed port (the words differed, so an agent could map the machine's ports), and
robots.txt read once per site. A real HTTP server on 127.0.0.1 counts the connections it accepts."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest

from docshelf.config import WebSettings
from docshelf.sources.web import Fetcher, FetchError, crawl
from localhttp import Reply, serve

TEXT = {"Content-Type": "text/plain"}
PRIVATE = r"is a local or private address \(127\.0\.0\.1\)"


def _agent() -> Fetcher:
    return Fetcher(WebSettings(), private_ok=False)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_agents_fetch_of_a_local_address_makes_no_connection() -> None:
    with serve({"/a": lambda r: Reply(200, b"a", TEXT)}) as srv:
        for base in (srv.base, srv.base.replace("127.0.0.1", "localhost")):
            with pytest.raises(FetchError, match=PRIVATE):
                _agent().get(base + "/a")
        assert srv.accepted == []  # refused before connect(), not on the connected socket
        assert Fetcher(WebSettings()).get(srv.base + "/a").body == b"a"  # the user's own may
        assert len(srv.accepted) == 1


def test_an_open_and_a_closed_port_are_refused_in_the_same_words(tmp_path: Path) -> None:
    with serve({"/a": lambda r: Reply(200, b"a", TEXT)}) as srv:
        open_port = int(srv.base.rsplit(":", 1)[1])
        said = {}
        for port in (open_port, _closed_port()):
            url = f"http://127.0.0.1:{port}/a"
            with pytest.raises(FetchError) as caught:
                _agent().get(url)
            crawled = crawl(url, tmp_path / str(port), WebSettings(), _agent())
            assert [s.reason for s in crawled.skipped] == [str(caught.value)]  # not via robots.txt
            said[port] = str(caught.value)
        assert srv.accepted == []
    first, second = said.values()
    assert re.search(PRIVATE, first) and first == second, said
    assert "refused" not in first.lower() and "robots" not in first


def test_a_name_that_resolves_to_a_local_address_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every address the name has is checked: one private answer among public ones is enough."""
    real = socket.getaddrinfo
    names = {"intranet.test": ["127.0.0.1"], "mixed.test": ["93.184.216.34", "127.0.0.1"]}

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in names[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with serve({"/a": lambda r: Reply(200, b"a", TEXT)}) as srv:
        port = srv.base.rsplit(":", 1)[1]
        for name in names:
            with pytest.raises(FetchError, match=rf"{name} {PRIVATE}"):
                _agent().get(f"http://{name}:{port}/a")
        assert srv.accepted == []
        assert Fetcher(WebSettings()).get(f"http://intranet.test:{port}/a").body == b"a"


def test_robots_txt_is_read_once_when_the_site_redirects(tmp_path: Path) -> None:
    """http://site -> https://site (or site -> www.site) redirects robots.txt and the page alike:
    the page's redirect asked for the new site's robots.txt again. Here the two "sites" are two
    ports of 127.0.0.1, which count as one site for redirects."""
    page = {"Content-Type": "text/html"}
    target_routes = {
        "/robots.txt": lambda r: Reply(200, b"User-agent: *\nDisallow: /private/\n", TEXT),
        "/a": lambda r: Reply(200, b"<p>moved page</p>", page),
    }
    with serve(target_routes) as target:  # type: ignore[arg-type]
        moved = {
            "/robots.txt": lambda r: Reply(301, headers={"Location": target.base + "/robots.txt"}),
            "/a": lambda r: Reply(301, headers={"Location": target.base + "/a"}),
        }
        with serve(moved) as first:  # type: ignore[arg-type]
            result = crawl(first.base + "/a", tmp_path / "m", WebSettings())
        assert result.fetched == [first.base + "/a"] and not result.skipped
        assert first.paths() == ["/robots.txt", "/a"]
        assert target.paths() == ["/robots.txt", "/a"]
